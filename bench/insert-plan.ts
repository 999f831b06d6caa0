// Where the event insert spends its time: a fresh store is loaded with --warm batches of the insights mix
// (bench/lib/insights-batches.ts), with the insights' aggregates and funnel postings and without them, then one more
// batch runs under EXPLAIN ANALYZE with the generic plan the loader runs. Prints the warm batches' time and WAL, each
// data-modifying step's time and rows, the statement's execution time, and with --plan the whole plan.
// --setup runs SQL statements (separated by ';;') on the store with the aggregates before loading: a schema
// variant is measured against the store as built, in the same run. --alternate instead runs the statements with and
// without the aggregates by turns on one store and connection, each its own batches, and prints each one's mean
// time per batch: what the aggregates cost with the database process's state shared, which a store per statement
// does not share.
//
//   node --import tsx bench/insert-plan.ts [--engine postgres|embedded] [--mix typical|custom-heavy|single-events] [--batch 10000]
//        [--warm 60] [--setup "SQL;;SQL"] [--plan] [--alternate]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore, type Store } from '../src/db/store.ts';
import { named } from '../src/db/named-sql.ts';
import { NAMED_STATEMENT_SETTINGS } from '../src/db/sql.ts';
import { SqlEventPlane } from '../src/events/write/event-plane.ts';
import { insertEventsSql, insertValues } from '../src/events/write/insert-statement.ts';
import { createTestDatabase } from '../test/helpers/postgres.ts';
import { insightsRecords, type Mix, singleEventRecords } from './lib/insights-batches.ts';
import { batchOf } from '../src/events/write/log-record.ts';
import { formatTable, parseArgs, round, uptimeLine } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const ENGINE = args.get('engine') ?? 'postgres';
/** an insights mix, or `single-events`: the ingest bench's single-event requests */
const MIX = (args.get('mix') ?? 'typical') as Mix | 'single-events';
/** the mix's records in batches of `batchEvents`; `insights`: with the insights' aggregates */
const recordsOf = (appId: number, events: number, batchEvents: number, insights = true) =>
  MIX === 'single-events'
    ? singleEventRecords(appId, events, batchEvents, insights)
    : insightsRecords(appId, MIX, events, batchEvents, insights);
const BATCH = Number(args.get('batch') ?? 10_000);
const WARM = Number(args.get('warm') ?? 60);
const SETUP = args.get('setup');
const PLAN = args.has('plan');
const ALTERNATE = args.has('alternate');

async function open(): Promise<{ store: Store; drop(): Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-plan-'));
  const database = ENGINE === 'postgres' ? await createTestDatabase() : undefined;
  const store = await openStore({ dataDir, databaseUrl: database?.url });
  return {
    store,
    drop: async () => {
      await store.close();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** each data-modifying step of the plan (a CTE's insert, or the events' insert) with its time and rows */
function insertSteps(plan: string[]): (string | number)[][] {
  const steps: (string | number)[][] = [];
  for (const line of plan) {
    const match = /Insert on (\S+)(?: (\S+))? \(actual time=[\d.]+\.\.([\d.]+) rows=(\d+)/.exec(line);
    if (match) steps.push([match[2] ? `${match[1]} ${match[2]}` : match[1]!, Number(match[3]), Number(match[4])]);
  }
  return steps;
}

async function measure(insights: boolean): Promise<void> {
  const { store, drop } = await open();
  try {
    const app = await store.prisma.app.create({
      data: { appName: 'bench_insights', bot: '@bench_bot', domains: ['b.example'] },
    });
    if (insights && SETUP) for (const statement of SETUP.split(';;')) await store.sql.query(statement);
    const events = new SqlEventPlane(store.sql, { insights });
    const batches = recordsOf(app.id, (WARM + 1) * BATCH, BATCH, insights).map((records, index) =>
      batchOf(records, { node: 'bench', through: index + 1 }, insights),
    );
    const explained = batches.pop()!;
    const [before] = await store.sql.query<{ lsn: string }>(`SELECT pg_current_wal_lsn()::text AS lsn`);
    const started = performance.now();
    for (const batch of batches) await events.insertBatch(batch);
    const seconds = (performance.now() - started) / 1000;
    const [wal] = await store.sql.query<{ bytes: number }>(
      `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1::pg_lsn)::float8 AS bytes`,
      [before!.lsn],
    );
    const rows = await store.sql.transaction(async (tx) => {
      // the settings the service runs the statement with
      await tx.query(NAMED_STATEMENT_SETTINGS);
      return tx.query<Record<string, string>>(
        ...named(`EXPLAIN (ANALYZE, COSTS OFF) ${insertEventsSql(insights)}`, insertValues(explained)),
      );
    });
    const plan = rows.map((row) => Object.values(row)[0]!);
    console.log(
      `\n${insights ? 'With' : 'Without'} the insights' aggregates${insights && SETUP ? ' (set-up applied)' : ''}: ` +
        `${batches.length} warm batches in ${round(seconds, 2)} s, ${round(wal!.bytes / batches.length / 1024, 0)} KiB of WAL each`,
    );
    console.log(formatTable(['step', 'ms (inclusive)', 'rows'], insertSteps(plan)));
    for (const line of plan.filter((text) => /^(Planning|Execution) Time/.test(text))) console.log(line);
    if (PLAN) console.log(plan.join('\n'));
  } finally {
    await drop();
  }
}

/** the statements with and without the aggregates by turns on one store, after `WARM` batches of each */
async function alternate(): Promise<void> {
  const { store, drop } = await open();
  try {
    const app = await store.prisma.app.create({
      data: { appName: 'bench_insights', bot: '@bench_bot', domains: ['b.example'] },
    });
    const stores = [true, false].map((insights) => new SqlEventPlane(store.sql, { insights }));
    const batches = recordsOf(app.id, 2 * (2 * WARM) * BATCH, BATCH).map((records, index) =>
      batchOf(records, { node: 'bench', through: index + 1 }),
    );
    const times: [number[], number[]] = [[], []];
    for (const [index, batch] of batches.entries()) {
      const turn = index % 2;
      const started = performance.now();
      await stores[turn]!.insertBatch(batch);
      if (index >= 2 * WARM) times[turn]!.push(performance.now() - started);
    }
    const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
    const [withMs, withoutMs] = times.map(mean) as [number, number];
    console.log(`\nBy turns on one store, ${WARM} warm batches of each, then ${times[0].length} measured of each`);
    console.log(
      formatTable(
        ['statement', 'ms per batch', 'events/s'],
        [
          ['with the aggregates', round(withMs, 1), Math.round((BATCH * 1000) / withMs)],
          ['without', round(withoutMs, 1), Math.round((BATCH * 1000) / withoutMs)],
        ],
      ),
    );
    console.log(`ratio (with / without, events/s): ${round(withoutMs / withMs, 3)} ×`);
  } finally {
    await drop();
  }
}

console.log(`Event insert plan — ${ENGINE}, ${MIX} mix, batches of ${BATCH}, ${WARM} warm (${uptimeLine()})`);
if (ALTERNATE) await alternate();
else {
  await measure(true);
  await measure(false);
}
process.exit(0);

// Replayed batch bench: what a loader batch holding one event stored before costs (a client's retry, a log record
// loaded again after a crash), against a batch of new events only, through the real event insert with the insights,
// on PostgreSQL and embedded PGlite. The same custom-heavy batches (bench/lib/insights-batches.ts) into a fresh store:
// a few stored first, then in turns blocks of batches of new events and blocks of new batches with one request of a
// stored batch added each (a client replaying events). Prints the median milliseconds per batch of each kind (a
// block's first batch, which follows the other kind, not counted) and their ratio, and apart the median of the
// first batch of each replaying block.
//
//   node --import tsx bench/replayed-batch.ts [--batch 2000] [--blocks 4] [--only postgres|embedded]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore, type Store } from '../src/db/store.ts';
import { SqlEventPlane } from '../src/events/write/event-plane.ts';
import { batchOf } from '../src/events/write/log-record.ts';
import { available } from '../test/helpers/environment.ts';
import { createTestDatabase } from '../test/helpers/postgres.ts';
import { insightsRecords } from './lib/insights-batches.ts';
import { machineInfo } from './lib/processes.ts';
import { formatTable, median, parseArgs, round, uptimeLine } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const BATCH = Number(args.get('batch') ?? 2_000);
/** blocks of each kind, in turns, of BLOCK batches */
const BLOCKS = Number(args.get('blocks') ?? 4);
const BLOCK = 4;
const ONLY = args.get('only');
/** batches stored before the measured ones: the store warm, and records to replay */
const STORED_FIRST = 3;

const log = (message: string) =>
  console.error(`[bench replayed-batch ${new Date().toISOString().slice(11, 19)}] ${message}`);

async function measure(store: Store): Promise<{ fresh: number; replayed: number; firstReplayed: number }> {
  const app = await store.prisma.app.create({
    data: { appName: 'bench_replayed', bot: '@bench_replayed_bot', domains: ['bench.example.com'] },
  });
  const plane = new SqlEventPlane(store.sql);
  const measured = 2 * BLOCKS * BLOCK;
  const batches = insightsRecords(app.id, 'custom-heavy', BATCH * (STORED_FIRST + measured), BATCH);
  for (const records of batches.slice(0, STORED_FIRST)) await plane.insertBatch(batchOf(records));
  const stored = batches.slice(0, STORED_FIRST).flat();
  const times = { fresh: [] as number[], replayed: [] as number[], firstReplayed: [] as number[] };
  let next = STORED_FIRST;
  for (let block = 0; block < 2 * BLOCKS; block++) {
    const kind = block % 2 ? 'replayed' : 'fresh';
    for (let place = 0; place < BLOCK; place++) {
      const records = batches[next++]!;
      const sent = kind === 'fresh' ? records : [...records, stored[next % stored.length]!];
      const started = performance.now();
      await plane.insertBatch(batchOf(sent));
      // a block's first batch follows one of the other kind
      const ms = performance.now() - started;
      if (place > 0) times[kind].push(ms);
      else if (kind === 'replayed') times.firstReplayed.push(ms);
    }
  }
  return { fresh: median(times.fresh), replayed: median(times.replayed), firstReplayed: median(times.firstReplayed) };
}

const figures = ({ fresh, replayed, firstReplayed }: Awaited<ReturnType<typeof measure>>) => [
  round(fresh, 1),
  round(replayed, 1),
  round(replayed / fresh, 2),
  round(firstReplayed, 1),
];

async function main(): Promise<void> {
  log(uptimeLine());
  const rows: (string | number)[][] = [];
  if (ONLY !== 'embedded' && (await available('PostgreSQL'))) {
    const database = await createTestDatabase();
    const store = await openStore({
      dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-')),
      databaseUrl: database.url,
    });
    try {
      rows.push(['PostgreSQL', ...figures(await measure(store))]);
    } finally {
      await store.close();
      await database.drop();
    }
  }
  if (ONLY !== 'postgres') {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-'));
    const store = await openStore({ dataDir });
    try {
      rows.push(['embedded PGlite', ...figures(await measure(store))]);
    } finally {
      await store.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }
  console.log(
    `batches of about ${BATCH} custom-heavy events, median of ${BLOCKS * (BLOCK - 1)} each; ${JSON.stringify(machineInfo())}`,
  );
  console.log(
    formatTable(
      ['store', 'new events, ms', 'one event stored before, ms', 'ratio', 'the first such after new ones, ms'],
      rows,
    ),
  );
}

await main();

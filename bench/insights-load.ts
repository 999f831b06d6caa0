// Insights load bench: what the insights' aggregates and the funnel postings cost the loader. The same batches (the
// official client's shape, bench/lib/bodies.ts: sessions of launches, hides, custom events with properties, TON
// Connect connections, made rows as the service makes them and read back as the loader reads them from the durable
// log, with their funnel postings or, for the store without the insights, without) are joined as the loader joins
// them and stored through the real event insert with the aggregates and without them, both timed, into a fresh
// store each time, alternating, on PostgreSQL and embedded PGlite. Then the service's own ingest throughput on each
// store: the real service (src/main.ts) and the same service without the insights' aggregates and postings
// (bench/service-without-insights.ts), alternating, each
// loaded by one load generator (wrk when installed, else autocannon) for --sustain seconds with 20-event gzip
// bodies of the same mix; its throughput is the events it acknowledged and stored over the time until its log was
// empty again (on PostgreSQL each run starts right after a checkpoint). Prints events per second and the ratios,
// then one JSON document. The target (>= 0.9) is the service's
// ingest, acknowledged and stored, for each store and mix: the loader alone stores fixed batches (--batch), where a
// batch's fixed costs weigh more than in the larger batches the service's loader commits at its max, so its ratios
// are printed as what the aggregates cost per batch of that size, not judged.
//
//   node --import tsx bench/insights-load.ts [--events 200000] [--batch 2000] [--rounds 2] [--only postgres|embedded] [--mix typical|custom-heavy]
//        [--sustain 15] [--connections 64] [--json-out file]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore, type Store } from '../src/db/store.ts';
import { SqlEventPlane } from '../src/events/write/event-plane.ts';
import { available } from '../test/helpers/environment.ts';
import { checkpoint, createTestDatabase } from '../test/helpers/postgres.ts';
import { insightsMixBodies, writeBodyFile } from './lib/bodies.ts';
import { batchOf } from '../src/events/write/log-record.ts';
import { insightsRecords, MIXES, type Mix } from './lib/insights-batches.ts';
import { runLoad } from './lib/loadgen.ts';
import { machineInfo, startNode, UNLIMITED_SERVICE_SETTINGS } from './lib/processes.ts';
import { counterDelta, drainedWithin, readMetrics } from './lib/service-metrics.ts';
import { runCliJson } from '../test/helpers/service-process.ts';
import { formatTable, parseArgs, printSummary, round, target, uptimeLine, type Target } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const EVENTS = Number(args.get('events') ?? 200_000);
const BATCH = Number(args.get('batch') ?? 2_000);
const ROUNDS = Number(args.get('rounds') ?? 2);
const ONLY = args.get('only');
const JSON_OUT = args.get('json-out');
const SUSTAIN = Number(args.get('sustain') ?? 15);
const CONNECTIONS = Number(args.get('connections') ?? 64);
/** a generous upper bound of the service's requests per second, so a run never runs out of distinct bodies */
const REQUEST_RATE_CAP = 6_000;
/** the service's warm-up before each measured run */
const WARMUP_SECONDS = 3;
const ONLY_MIX = args.get('mix') as Mix | undefined;

const log = (message: string) =>
  console.error(`[bench insights-load ${new Date().toISOString().slice(11, 19)}] ${message}`);

interface Run {
  engine: string;
  mix: Mix;
  insights: boolean;
  round: number;
  events: number;
  seconds: number;
  eventsPerSecond: number;
}

async function measure(
  engine: string,
  open: () => Promise<{ store: Store; drop(): Promise<void> }>,
  mix: Mix,
  insights: boolean,
  round_: number,
): Promise<Run> {
  const { store, drop } = await open();
  try {
    const app = await store.prisma.app.create({
      data: { appName: 'bench_insights', bot: '@bench_bot', domains: ['b.example'] },
    });
    const events = new SqlEventPlane(store.sql, { insights });
    const work = insightsRecords(app.id, mix, EVENTS, BATCH, insights);
    // the first batch prepares the statement and warms the tables; it is not timed
    // each batch with its log offset, as the loader commits it (the statement's plan depends on it)
    const batch = (index: number) => batchOf(work[index]!, { node: 'bench', through: index + 1 }, insights);
    await events.insertBatch(batch(0));
    const started = performance.now();
    let stored = 0;
    for (let index = 1; index < work.length; index++) stored += await events.insertBatch(batch(index));
    const seconds = (performance.now() - started) / 1000;
    const run = {
      engine,
      mix,
      insights,
      round: round_,
      events: stored,
      seconds: round(seconds, 2),
      eventsPerSecond: round(stored / seconds, 0),
    };
    log(`${engine}, ${mix}, insights ${insights ? 'on' : 'off'}, round ${round_}: ${run.eventsPerSecond} events/s`);
    return run;
  } finally {
    await store.close();
    await drop();
  }
}

interface ServiceRun {
  engine: string;
  mix: Mix;
  insights: boolean;
  round: number;
  acknowledgedPerSecond: number;
  /** events acknowledged and stored, over the load's time and the drain after it */
  storedPerSecond: number;
  drainSeconds: number;
}

/** the service on a fresh store, with or without the insights, at its max for SUSTAIN seconds */
async function measureService(
  engine: string,
  mix: Mix,
  insights: boolean,
  round_: number,
  bodies: { warm: string; measured: string },
): Promise<ServiceRun> {
  const database = engine === 'PostgreSQL' ? await createTestDatabase() : undefined;
  const env: Record<string, string> = {
    ...(database ? { DATABASE_URL: database.url } : {}),
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-')),
    SECRET: 'bench-secret-'.padEnd(48, 'x'),
    ...UNLIMITED_SERVICE_SETTINGS,
  };
  const service = await startNode(insights ? 'src/main.ts' : 'bench/service-without-insights.ts', env);
  try {
    const { token } = await runCliJson<{ token: string }>(env, [
      'tokens',
      'create',
      '--bot',
      '@bench_insights_bot',
      '--domain',
      'bench.example.com',
      '--app-name',
      'bench_insights',
    ]);
    const load = (bodyFile: string, durationSec: number) =>
      runLoad({
        url: `${service.url}/events`,
        headers: {
          'content-type': 'application/json',
          'content-encoding': 'gzip',
          'tga-auth-token': token,
          origin: 'https://bench.example.com',
        },
        bodyFile,
        connections: CONNECTIONS,
        durationSec,
      });
    // a warm-up of bodies of its own (the measured ones are all new to the store), stored before the measurement
    await load(bodies.warm, WARMUP_SECONDS);
    await drainedWithin(service.url, 120_000);
    // every run starts with the server's WAL checkpointed: a checkpoint the runs before made due lands in none
    if (database) await checkpoint();
    const before = await readMetrics(service.url);
    const started = performance.now();
    const result = await load(bodies.measured, SUSTAIN);
    const loadSeconds = (performance.now() - started) / 1000;
    if (result.errorStatus > 0 || result.transportErrors > 0)
      throw new Error(`${result.errorStatus} answers >= 400 and ${result.transportErrors} transport errors`);
    // a body sent again is a duplicate the store skips: acknowledged, never stored
    if (result.bodyWraps > 0) throw new Error('the run used up its distinct bodies: raise REQUEST_RATE_CAP');
    if ((await drainedWithin(service.url, 300_000)) === null) throw new Error('the log did not empty within 5 minutes');
    const seconds = (performance.now() - started) / 1000;
    const after = await readMetrics(service.url);
    const run = {
      engine,
      mix,
      insights,
      round: round_,
      acknowledgedPerSecond: round(counterDelta(before, after, 'tma_events_accepted_total') / loadSeconds, 0),
      storedPerSecond: round(counterDelta(before, after, 'tma_events_stored_total') / seconds, 0),
      drainSeconds: round(seconds - loadSeconds, 1),
    };
    log(
      `service, ${engine}, ${mix}, insights ${insights ? 'on' : 'off'}, round ${round_}: ${run.acknowledgedPerSecond} events/s acknowledged, ${run.storedPerSecond} stored (drained in ${run.drainSeconds} s)`,
    );
    return run;
  } finally {
    await service.stop();
    await database?.drop();
  }
}

async function main(): Promise<void> {
  log(uptimeLine());
  const started = new Date();
  const engines: { name: string; open: () => Promise<{ store: Store; drop(): Promise<void> }> }[] = [];
  if (ONLY !== 'embedded' && (await available('PostgreSQL')))
    engines.push({
      name: 'PostgreSQL',
      open: async () => {
        const database = await createTestDatabase();
        return {
          store: await openStore({
            dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-')),
            databaseUrl: database.url,
          }),
          drop: () => database.drop(),
        };
      },
    });
  if (ONLY !== 'postgres')
    engines.push({
      name: 'embedded PGlite',
      open: async () => {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-'));
        return {
          store: await openStore({ dataDir }),
          drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
        };
      },
    });
  const mixes = ONLY_MIX ? [ONLY_MIX] : (Object.keys(MIXES) as Mix[]);
  const runs: Run[] = [];
  for (const engine of engines)
    for (const mix of mixes)
      for (let r = 1; r <= ROUNDS; r++)
        for (const insights of r % 2 ? [true, false] : [false, true])
          runs.push(await measure(engine.name, engine.open, mix, insights, r));

  const serviceRuns: ServiceRun[] = [];
  if (SUSTAIN > 0) {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-bodies-'));
    for (const mix of mixes) {
      const bodyFile = (tag: string, seconds: number) =>
        writeBodyFile(
          path.join(work, `${tag}.bin`),
          insightsMixBodies({ appName: 'bench_insights', tag, count: REQUEST_RATE_CAP * seconds, ...MIXES[mix] }),
        ).file;
      const bodies = { warm: bodyFile(`${mix}-warm`, WARMUP_SECONDS), measured: bodyFile(mix, SUSTAIN) };
      for (const engine of engines)
        for (let r = 1; r <= ROUNDS; r++)
          for (const insights of r % 2 ? [true, false] : [false, true])
            serviceRuns.push(await measureService(engine.name, mix, insights, r, bodies));
    }
    fs.rmSync(work, { recursive: true, force: true });
  }

  const targets: Target[] = [];
  const rows: (string | number)[][] = [];
  for (const engine of engines)
    for (const mix of mixes) {
      const rate = (insights: boolean) => {
        const mine = runs.filter((run) => run.engine === engine.name && run.mix === mix && run.insights === insights);
        return mine.reduce((sum, run) => sum + run.events, 0) / mine.reduce((sum, run) => sum + run.seconds, 0);
      };
      const [on, off] = [rate(true), rate(false)];
      rows.push([engine.name, mix, round(on, 0), round(off, 0), round(on / off, 3)]);
    }
  const serviceRows: (string | number)[][] = [];
  for (const engine of engines)
    for (const mix of mixes) {
      const mine = (insights: boolean) =>
        serviceRuns.filter((run) => run.engine === engine.name && run.mix === mix && run.insights === insights);
      if (mine(true).length === 0) continue;
      const mean = (insights: boolean, figure: 'storedPerSecond' | 'acknowledgedPerSecond') =>
        mine(insights).reduce((sum, run) => sum + run[figure], 0) / mine(insights).length;
      const [on, off] = [mean(true, 'storedPerSecond'), mean(false, 'storedPerSecond')];
      serviceRows.push([
        engine.name,
        mix,
        round(mean(true, 'acknowledgedPerSecond'), 0),
        round(on, 0),
        round(mean(false, 'acknowledgedPerSecond'), 0),
        round(off, 0),
        round(on / off, 3),
      ]);
      targets.push(
        target(
          `service ingest, acknowledged and stored, with the insights vs without, ${engine.name}, ${mix}`,
          on / off,
          '×',
          '>=',
          0.9,
        ),
      );
    }
  console.log(
    `\nInsights load bench — the loader alone (what the aggregates cost per batch, not judged): ${EVENTS.toLocaleString('en')} events per run in batches of ${BATCH}, ${ROUNDS} rounds\n`,
  );
  console.log(formatTable(['engine', 'mix', 'with insights, events/s', 'without, events/s', 'ratio'], rows));
  if (serviceRows.length > 0) {
    console.log(
      `\nThe service, ${SUSTAIN} s at its max (${CONNECTIONS} connections), then until its log is empty; ${ROUNDS} rounds\n`,
    );
    console.log(
      formatTable(
        [
          'engine',
          'mix',
          'with: acknowledged/s',
          'with: stored/s',
          'without: acknowledged/s',
          'without: stored/s',
          'ratio (stored)',
        ],
        serviceRows,
      ),
    );
  }
  printSummary(
    {
      bench: 'insights-load',
      date: started.toISOString(),
      machine: machineInfo(),
      settings: {
        events: EVENTS,
        batch: BATCH,
        rounds: ROUNDS,
        mixes,
        sustainSeconds: SUSTAIN,
        connections: CONNECTIONS,
      },
      runs,
      serviceRuns,
      targets,
    },
    targets,
    JSON_OUT,
  );
}

await main();

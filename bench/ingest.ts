// Ingestion bench. In one run, with one load generator (wrk when installed, else autocannon):
//   (a) baseline: a bare Fastify server answering 201 (bench/baseline-server.ts), as fast as it goes;
//   (b) the log-only reference (bench/log-reference-server.ts): the baseline plus the service's durable append,
//       one record per request: what the service could reach if everything but the durable 201 were free;
//   (c) the real service, built and started as `npm start` runs it, embedded store, single-event plain JSON requests:
//       req/s against (a) (target >= 0.5) and (b) (target >= 0.9); and the log-and-store reference (the log reference
//       whose loader stores each body as a row in PGlite): the ceiling of any implementation that acknowledges from a
//       durable log and keeps every event in the embedded store; and the record-only reference
//       (bench/record-reference-server.ts): the service's own rows, log and event insert with its rollups behind the
//       bare handler, no checks: the ceiling of any implementation that keeps the service's rows and rollups;
//   (d) the real service on PostgreSQL, 20-event gzip batches with TGA-Auth-Token (the official client's shape):
//       acknowledged events/s in a burst (target >= 150,000), then sustained for --sustain seconds, acknowledged
//       and loaded into the store (target >= 100,000, the backlog not growing);
//   (e) both shapes again at half of the measured maximum, and (b) at the same rate: p99 against 2 x (b)'s p99;
//       and freshness, from the service's tma_request_freshness_seconds histogram: how long an acknowledged
//       request waited until the store held it (what `apps show` and the dashboard wait for), p99 <= 1 s;
//   (f) CPU per event: user+system time of the service process (and of its PostgreSQL backends) / events;
//       RSS of the service during its max-load runs (embedded: target <= 400 MiB);
//   (g) store references (bench/reference-server.ts): a raw body per request on PGlite and bare event rows on
//       PostgreSQL, group-committed, each 201 after its commit: what the stores themselves take on this machine,
//       which bounds the rate any implementation keeps loaded.
// Every request carries distinct events, so the store really inserts each one.
// Prints a readable table and one JSON document; exits non-zero only when something failed to run.
//
//   node --import tsx bench/ingest.ts [--duration 10] [--warmup 15] [--connections 64] [--sustain 60]
//        [--only embedded|postgres] [--json-out file]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { available } from '../test/helpers/environment.ts';
import { createTestDatabase, type TestDatabase } from '../test/helpers/postgres.ts';
import { NPM_START_TUNABLES, runCliJson, startServiceProcess } from '../test/helpers/service-process.ts';
import { officialBatchBodies, singleEventBodies, writeBodyFile } from './lib/bodies.ts';
import { loadGeneratorName, runLoad, type LoadResult } from './lib/loadgen.ts';
import {
  cpuSeconds,
  machineInfo,
  rssSampler,
  runBenchMain,
  threadCpuSeconds,
  threadSplit,
  startNode,
  type NodeProcess,
  UNLIMITED_SERVICE_SETTINGS,
} from './lib/processes.ts';
import {
  counterDelta,
  drainedWithin,
  histogramQuantile,
  readBacklog,
  readMetrics,
  type MetricsReading,
} from './lib/service-metrics.ts';
import { figure, formatTable, parseArgs, printSummary, round, type Target, target, uptimeLine } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const DURATION = Number(args.get('duration') ?? 10);
/**
 * A new store's first seconds at full rate are not its steady state: its tables are analysed and vacuumed often while
 * they grow from empty, and with 3 s of warm-up the embedded store's thread spent 2–5 times its steady CPU per event
 * in some runs and not in others
 */
const WARMUP = Number(args.get('warmup') ?? 15);
const CONNECTIONS = Number(args.get('connections') ?? 64);
const ONLY = args.get('only');
const SUSTAIN = Number(args.get('sustain') ?? 60);
const JSON_OUT = args.get('json-out');

const APP = 'bench_app';
const DOMAIN = 'bench.example.com';
const SECRET = 'bench-secret-'.padEnd(48, 'x');
/** the trickles: a small app's rates (events a second), each for TRICKLE_SECONDS after a quiet TRICKLE_SETTLE_MS */
const TRICKLE_RATES = [10, 100];
const TRICKLE_SECONDS = 20;
const TRICKLE_SETTLE_MS = 15_000;
/** generous upper bounds of the service's rates, so a phase never runs out of distinct bodies */
const SINGLE_RATE_CAP = Number(args.get('single-rate-cap') ?? 25_000);
const BATCH_RATE_CAP = Number(args.get('batch-rate-cap') ?? 8_000);

const log = (message: string) => console.error(`[bench ingest ${new Date().toISOString().slice(11, 19)}] ${message}`);

interface Phase extends LoadResult {
  name: string;
  /** events in the bodies of one request */
  eventsPerRequest: number;
  eventsPerSec: number;
  rate?: number;
  /** service process CPU seconds during the phase */
  serviceCpuSec?: number;
  /** PostgreSQL backends' CPU seconds during the phase */
  postgresCpuSec?: number;
  serviceCpuUsPerEvent?: number;
  /** the service's CPU per event by thread: main, its busiest other (the embedded store's), the rest */
  serviceThreadsUsPerEvent?: { main: number; busiestOther: number; rest: number };
  postgresCpuUsPerEvent?: number;
  serviceRssMaxMiB?: number;
  /** of it, anonymous memory (the rest is files mapped: the log's, the store's) */
  serviceAnonymousMaxMiB?: number;
  /** the service's own figures over the phase (and until its log was empty again) */
  freshnessP99Sec?: number | null;
  /** how long the log took to empty after the load stopped */
  drainSec?: number | null;
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-'));
const started = new Date();
const loadStart = os.loadavg();
const phases: Phase[] = [];
const notes: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

function bodyFile(name: string, bodies: Buffer[]): string {
  return writeBodyFile(path.join(work, `${name}.bin`), bodies).file;
}

async function postgresPids(databaseUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    return rows.map((row) => row.pid);
  } finally {
    await client.end();
  }
}

interface Measure {
  name: string;
  url: string;
  headers: Record<string, string>;
  file: string;
  eventsPerRequest: number;
  rate?: number;
  durationSec?: number;
  service?: NodeProcess;
  /** the server skips events it stored before: a body sent again is cheaper than a new one */
  deduplicates?: boolean;
  databaseUrl?: string;
  /** the real service: read its /metrics around the phase and wait for its log to empty after it */
  serviceUrl?: string;
}

/** longest wait for a service's log to empty after a phase */
const DRAIN_TIMEOUT_MS = 120_000;

async function measure(spec: Measure): Promise<Phase> {
  const pidsBefore = spec.databaseUrl ? await postgresPids(spec.databaseUrl) : [];
  const pgBefore = new Map(pidsBefore.map((pid) => [pid, cpuSeconds(pid)]));
  const cpuBefore = spec.service ? cpuSeconds(spec.service.pid) : 0;
  const threadsBefore = spec.service ? threadCpuSeconds(spec.service.pid) : undefined;
  const rss = spec.service ? rssSampler(spec.service.pid) : undefined;
  const metricsBefore = spec.serviceUrl ? await readMetrics(spec.serviceUrl) : undefined;
  const result = await runLoad({
    url: spec.url,
    headers: spec.headers,
    bodyFile: spec.file,
    connections: CONNECTIONS,
    durationSec: spec.durationSec ?? DURATION,
    rate: spec.rate,
  });
  const rssMax = rss?.stop();
  const phase: Phase = {
    name: spec.name,
    ...result,
    eventsPerRequest: spec.eventsPerRequest,
    eventsPerSec: result.rps * spec.eventsPerRequest,
    rate: spec.rate,
  };
  if (spec.serviceUrl && metricsBefore) {
    // the next phase starts with an empty log, and every request of this one is in the freshness histogram
    const drainMs = await drainedWithin(spec.serviceUrl, DRAIN_TIMEOUT_MS);
    phase.drainSec = drainMs === null ? null : round(drainMs / 1000, 1);
    phase.freshnessP99Sec = histogramQuantile(
      metricsBefore,
      await readMetrics(spec.serviceUrl),
      'tma_request_freshness_seconds',
      0.99,
    );
  }
  const events = (result.requests - result.errorStatus) * spec.eventsPerRequest;
  if (spec.service) {
    phase.serviceCpuSec = round(cpuSeconds(spec.service.pid) - cpuBefore, 2);
    phase.serviceCpuUsPerEvent = events > 0 ? round((phase.serviceCpuSec * 1e6) / events, 1) : undefined;
    phase.serviceRssMaxMiB = rssMax ? round(rssMax / 2 ** 20, 0) : undefined;
    phase.serviceAnonymousMaxMiB = rss ? round(rss.maxAnonymous() / 2 ** 20, 0) : undefined;
    if (events > 0) {
      const split = threadSplit(threadsBefore!, threadCpuSeconds(spec.service.pid), spec.service.pid);
      const perEvent = (seconds: number) => round((seconds * 1e6) / events, 1);
      phase.serviceThreadsUsPerEvent = {
        main: perEvent(split.main),
        busiestOther: perEvent(split.busiestOther),
        rest: perEvent(split.rest),
      };
    }
  }
  if (spec.databaseUrl) {
    const pidsAfter = await postgresPids(spec.databaseUrl);
    let cpu = 0;
    for (const pid of new Set([...pidsBefore, ...pidsAfter]))
      cpu += Math.max(0, cpuSeconds(pid) - (pgBefore.get(pid) ?? 0));
    phase.postgresCpuSec = round(cpu, 2);
    phase.postgresCpuUsPerEvent = events > 0 ? round((cpu * 1e6) / events, 1) : undefined;
  }
  if (result.errorStatus > 0 || result.transportErrors > 0) {
    throw new Error(
      `${spec.name}: ${result.errorStatus} answers >= 400 and ${result.transportErrors} transport errors`,
    );
  }
  if (result.bodyWraps > 0 && spec.deduplicates)
    notes.push(
      `${spec.name}: the body list ran out ${result.bodyWraps}× (duplicates were skipped by the store); raise --*-rate-cap`,
    );
  log(
    `${spec.name}: ${round(result.rps, 0)} req/s (${round(phase.eventsPerSec, 0)} events/s), p50 ${round(result.p50Ms)} ms, p99 ${round(result.p99Ms)} ms` +
      (phase.serviceCpuUsPerEvent !== undefined ? `, service CPU ${phase.serviceCpuUsPerEvent} µs/event` : '') +
      (phase.serviceThreadsUsPerEvent
        ? ` (main thread ${phase.serviceThreadsUsPerEvent.main}, busiest other ${phase.serviceThreadsUsPerEvent.busiestOther}, the rest ${phase.serviceThreadsUsPerEvent.rest})`
        : '') +
      (phase.postgresCpuUsPerEvent !== undefined ? `, PostgreSQL CPU ${phase.postgresCpuUsPerEvent} µs/event` : '') +
      (phase.freshnessP99Sec !== undefined
        ? `, freshness p99 <= ${phase.freshnessP99Sec} s, log empty ${phase.drainSec ?? '> 120'} s after`
        : ''),
  );
  phases.push(phase);
  return phase;
}

/** runs the warm-up load (then waits for a service's log to empty); returns the requests it got answered */
async function warm(spec: Omit<Measure, 'name'>): Promise<number> {
  if (WARMUP <= 0) return 0;
  const result = await runLoad({
    url: spec.url,
    headers: spec.headers,
    bodyFile: spec.file,
    connections: CONNECTIONS,
    durationSec: WARMUP,
  });
  if (result.errorStatus > 0 || result.transportErrors > 0) {
    throw new Error(
      `warm-up of ${spec.url}: ${result.errorStatus} answers >= 400 and ${result.transportErrors} transport errors`,
    );
  }
  if (spec.serviceUrl) await drainedWithin(spec.serviceUrl, DRAIN_TIMEOUT_MS);
  return result.requests;
}

interface Sustained {
  seconds: number;
  acknowledgedPerSec: number;
  /** events the store newly held during the window, per second */
  loadedPerSec: number;
  backlogStart: number;
  backlogEnd: number;
  /** the lesser of the two rates, when the backlog did not grow by more than a second's worth of requests */
  keptUpPerSec: number | null;
}

/** the service at its max for SUSTAIN seconds: what it acknowledges and what its loader stores meanwhile */
async function sustain(spec: Omit<Measure, 'name'> & { serviceUrl: string }): Promise<Sustained> {
  const before = await readMetrics(spec.serviceUrl);
  const backlogStart = (await readBacklog(spec.serviceUrl)).requests;
  const started = performance.now();
  const result = await runLoad({
    url: spec.url,
    headers: spec.headers,
    bodyFile: spec.file,
    connections: CONNECTIONS,
    durationSec: SUSTAIN,
  });
  const seconds = (performance.now() - started) / 1000;
  const after: MetricsReading = await readMetrics(spec.serviceUrl);
  const backlogEnd = (await readBacklog(spec.serviceUrl)).requests;
  if (result.errorStatus > 0 || result.transportErrors > 0) {
    throw new Error(
      `sustained run: ${result.errorStatus} answers >= 400 and ${result.transportErrors} transport errors`,
    );
  }
  const acknowledgedPerSec = counterDelta(before, after, 'tma_events_accepted_total') / seconds;
  const loadedPerSec = counterDelta(before, after, 'tma_events_stored_total') / seconds;
  const keptUp = backlogEnd - backlogStart <= result.rps;
  const figures = {
    seconds: round(seconds, 1),
    acknowledgedPerSec: round(acknowledgedPerSec, 0),
    loadedPerSec: round(loadedPerSec, 0),
    backlogStart,
    backlogEnd,
    keptUpPerSec: keptUp ? round(Math.min(acknowledgedPerSec, loadedPerSec), 0) : null,
  };
  log(
    `sustained ${figures.seconds} s: ${figures.acknowledgedPerSec} events/s acknowledged, ${figures.loadedPerSec} loaded; backlog ${backlogStart} → ${backlogEnd} requests`,
  );
  await drainedWithin(spec.serviceUrl, DRAIN_TIMEOUT_MS);
  return figures;
}

/** seconds until the log-and-store reference has stored all it acknowledged (null: not within the drain timeout) */
async function backlogDrainSeconds(url: string): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < DRAIN_TIMEOUT_MS) {
    const { records } = (await (await fetch(`${url}/backlog`)).json()) as { records: number };
    if (records === 0) return round((Date.now() - started) / 1000, 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return null;
}

/**
 * a reference that stores what it acknowledges behind its log (it serves GET /backlog), at max with single events once
 * warmed up and drained, and how long its log took to empty after
 */
async function referenceAtMax(
  name: string,
  script: string,
  env: Record<string, string>,
  bodies: { warm: string; max: string },
): Promise<Phase> {
  const reference = await startNode(script, env);
  cleanups.push(() => reference.stop());
  const url = `${reference.url}/events`;
  const headers = baseHeaders('tma_baseline');
  await warm({ url, headers, file: bodies.warm, eventsPerRequest: 1 });
  await backlogDrainSeconds(reference.url);
  const phase = await measure({
    name: `${name}, single event, max`,
    url,
    headers,
    file: bodies.max,
    eventsPerRequest: 1,
    service: reference,
  });
  phase.drainSec = await backlogDrainSeconds(reference.url);
  await reference.stop();
  return phase;
}

/** the reference server on one of the stores: `requests` (a raw body per request) or `events` (bare event rows) */
async function startReference(
  mode: 'requests' | 'events' | 'copy',
  store: { DATABASE_URL: string } | { DATA_DIR: string },
): Promise<NodeProcess> {
  const reference = await startNode('bench/reference-server.ts', { ...store, REFERENCE: mode });
  cleanups.push(() => reference.stop());
  return reference;
}

async function startService(
  env: Record<string, string>,
): Promise<{ service: NodeProcess; token: string; env: Record<string, string> }> {
  const dataDir = fs.mkdtempSync(path.join(work, 'data-'));
  const fullEnv = {
    ...env,
    DATA_DIR: dataDir,
    SECRET,
    // npm start's allocator setting (a child gets none of the bench's environment)
    GLIBC_TUNABLES: NPM_START_TUNABLES,
    ...UNLIMITED_SERVICE_SETTINGS,
  };
  const service = await startServiceProcess(fullEnv);
  cleanups.push(() => service.stop());
  const created = await runCliJson<{ token: string }>(fullEnv, [
    'tokens',
    'create',
    '--bot',
    '@bench_app_bot',
    '--domain',
    DOMAIN,
    '--app-name',
    APP,
  ]);
  return { service, token: created.token, env: fullEnv };
}

/**
 * every acknowledged event is stored; a few more may be: requests in flight when a phase's time is up
 * are committed by the service but not counted by the load generator (at most one per connection and phase)
 */
function storedMatches(stored: number, acknowledged: number, eventsPerRequest: number): boolean {
  return stored >= acknowledged && stored <= acknowledged + 3 * CONNECTIONS * eventsPerRequest;
}

async function truncateReferenceEvents(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  await client.query('TRUNCATE reference_events');
  await client.end();
}

/** (e) for one store: p99 at half max against the log-only reference at the same rate, and freshness */
function latencyTargets(store: string, max: Phase, half: Phase, logHalf: Phase): Target[] {
  const bucket = 'upper bound of its histogram bucket';
  const p99Note = `${round(half.p99Ms)} ms vs ${round(logHalf.p99Ms)} ms`;
  return [
    target(
      `(e) ${store} p99 at half max ÷ log-only reference p99 (same rate)`,
      half.p99Ms / logHalf.p99Ms,
      '×',
      '<=',
      2,
      p99Note,
    ),
    target(`(e) ${store} freshness p99 at half max`, half.freshnessP99Sec ?? null, 's', '<=', 1, bucket),
    target(`(e) ${store} freshness p99 at max`, max.freshnessP99Sec ?? null, 's', '<=', 5, bucket),
  ];
}

const baseHeaders = (token: string) => ({
  'content-type': 'application/json',
  origin: `https://${DOMAIN}`,
  'tga-auth-token': token,
});

async function main(): Promise<void> {
  const tool = loadGeneratorName();
  log(
    `load generator: ${tool}; ${uptimeLine()}; ${DURATION} s per phase, ${WARMUP} s warm-up, ${CONNECTIONS} connections`,
  );

  const runEmbedded = ONLY === undefined || ONLY === 'embedded';
  const runPostgres = (ONLY === undefined || ONLY === 'postgres') && (await available('PostgreSQL'));
  if ((ONLY === undefined || ONLY === 'postgres') && !runPostgres)
    notes.push('PostgreSQL does not answer: phases (c) and (d, PostgreSQL) skipped');

  // bodies first (CPU-heavy), so generating them never overlaps a measurement
  log('generating request bodies');
  const files = {
    singleWarm: bodyFile(
      'single-warm',
      singleEventBodies({ appName: APP, tag: 'sw', count: Math.max(1, SINGLE_RATE_CAP * WARMUP) }),
    ),
    singleMax: bodyFile(
      'single-max',
      singleEventBodies({ appName: APP, tag: 'sm', count: SINGLE_RATE_CAP * DURATION }),
    ),
    // a file per rate: a phase sending another's bodies again would have the store skip them as duplicates
    singleTrickles: TRICKLE_RATES.map((rate) =>
      bodyFile(
        `single-trickle-${rate}`,
        singleEventBodies({ appName: APP, tag: `st${rate}`, count: rate * TRICKLE_SECONDS * 2 }),
      ),
    ),
    singleHalf: bodyFile(
      'single-half',
      singleEventBodies({ appName: APP, tag: 'sh', count: Math.ceil((SINGLE_RATE_CAP * DURATION) / 2) }),
    ),
    batchWarm: runPostgres
      ? bodyFile(
          'batch-warm',
          officialBatchBodies({ appName: APP, tag: 'bw', count: Math.max(1, BATCH_RATE_CAP * WARMUP) }),
        )
      : '',
    batchMax: runPostgres
      ? bodyFile('batch-max', officialBatchBodies({ appName: APP, tag: 'bm', count: BATCH_RATE_CAP * DURATION }))
      : '',
    batchHalf: runPostgres
      ? bodyFile(
          'batch-half',
          officialBatchBodies({ appName: APP, tag: 'bh', count: Math.ceil((BATCH_RATE_CAP * DURATION) / 2) }),
        )
      : '',
  };

  // (a) the baseline and (b) the log-only reference, as fast as they go, both shapes
  const baseline = await startNode('bench/baseline-server.ts', {});
  cleanups.push(() => baseline.stop());
  const baselineUrl = `${baseline.url}/events`;
  const logOnly = await startNode('bench/log-reference-server.ts', {
    DATA_DIR: fs.mkdtempSync(path.join(work, 'log-reference-')),
  });
  cleanups.push(() => logOnly.stop());
  const logOnlyUrl = `${logOnly.url}/events`;
  const plain = baseHeaders('tma_baseline');
  const gzip = { ...plain, 'content-encoding': 'gzip' };
  await warm({ url: baselineUrl, headers: plain, file: files.singleWarm, eventsPerRequest: 1 });
  const baseSingle = await measure({
    name: 'baseline, single event, max',
    url: baselineUrl,
    headers: plain,
    file: files.singleMax,
    eventsPerRequest: 1,
  });
  await warm({ url: logOnlyUrl, headers: plain, file: files.singleWarm, eventsPerRequest: 1 });
  const logSingle = await measure({
    name: 'log-only reference, single event, max',
    url: logOnlyUrl,
    headers: plain,
    file: files.singleMax,
    eventsPerRequest: 1,
    service: logOnly,
  });
  let baseBatch: Phase | undefined;
  let logBatch: Phase | undefined;
  if (runPostgres) {
    await warm({ url: baselineUrl, headers: gzip, file: files.batchWarm, eventsPerRequest: 20 });
    baseBatch = await measure({
      name: 'baseline, 20-event gzip batch, max',
      url: baselineUrl,
      headers: gzip,
      file: files.batchMax,
      eventsPerRequest: 20,
    });
    await warm({ url: logOnlyUrl, headers: gzip, file: files.batchWarm, eventsPerRequest: 20 });
    logBatch = await measure({
      name: 'log-only reference, 20-event gzip batch, max',
      url: logOnlyUrl,
      headers: gzip,
      file: files.batchMax,
      eventsPerRequest: 20,
      service: logOnly,
    });
  }

  const targets: Target[] = [];
  const results: Record<string, unknown> = {};

  // (c) + (e) embedded store, single events
  if (runEmbedded) {
    const { service, token, env } = await startService({});
    const headers = baseHeaders(token);
    const url = `${service.url}/events`;
    const serviceUrl = service.url;
    const warmed = await warm({ url, headers, file: files.singleWarm, eventsPerRequest: 1, serviceUrl });
    const max = await measure({
      name: 'service embedded, single event, max',
      url,
      headers,
      file: files.singleMax,
      eventsPerRequest: 1,
      service,
      deduplicates: true,
      serviceUrl,
    });
    const rate = Math.max(1, Math.floor(max.rps / 2));
    const half = await measure({
      name: 'service embedded, single event, half max',
      url,
      headers,
      file: files.singleHalf,
      eventsPerRequest: 1,
      rate,
      service,
      deduplicates: true,
      serviceUrl,
    });
    // a small app's traffic, once the loads before have settled: what a commit's fixed cost comes to per event
    await new Promise((resolve) => setTimeout(resolve, TRICKLE_SETTLE_MS));
    const trickles: Phase[] = [];
    for (const [index, trickleRate] of TRICKLE_RATES.entries())
      trickles.push(
        await measure({
          name: `service embedded, single event, ${trickleRate}/s`,
          url,
          headers,
          file: files.singleTrickles[index]!,
          eventsPerRequest: 1,
          rate: trickleRate,
          durationSec: TRICKLE_SECONDS,
          service,
          deduplicates: true,
          serviceUrl,
        }),
      );
    const logHalf = await measure({
      name: 'log-only reference, single event, same rate',
      url: logOnlyUrl,
      headers: plain,
      file: files.singleHalf,
      eventsPerRequest: 1,
      rate,
    });
    const shown = await runCliJson<{ events_total: number }>(env, ['apps', 'show', '--app-name', APP]);
    // every 201 is a distinct event (unless a body list ran out, see the notes)
    const acknowledged =
      warmed + max.requests + half.requests + trickles.reduce((sum, trickle) => sum + trickle.requests, 0);
    results.embedded = { eventsTotal: shown.events_total, acknowledged };
    const wraps = [max, half, ...trickles].reduce((sum, phase) => sum + phase.bodyWraps, 0);
    if (wraps === 0 && !storedMatches(shown.events_total, acknowledged, 1)) {
      throw new Error(`embedded store holds ${shown.events_total} events, ${acknowledged} were acknowledged`);
    }
    await service.stop();

    const reference = await startReference('requests', { DATA_DIR: fs.mkdtempSync(path.join(work, 'reference-')) });
    const referenceUrl = `${reference.url}/events`;
    await warm({ url: referenceUrl, headers: plain, file: files.singleWarm, eventsPerRequest: 1 });
    const referenceMax = await measure({
      name: 'store reference PGlite, a row per request, max',
      url: referenceUrl,
      headers: plain,
      file: files.singleMax,
      eventsPerRequest: 1,
      service: reference,
    });
    await reference.stop();

    const singleBodies = { warm: files.singleWarm, max: files.singleMax };
    const logAndStoreMax = await referenceAtMax(
      'log-and-store reference',
      'bench/log-reference-server.ts',
      {
        DATA_DIR: fs.mkdtempSync(path.join(work, 'log-and-store-')),
        LOG_REFERENCE: 'log-and-store',
      },
      singleBodies,
    );
    const recordOnlyMax = await referenceAtMax(
      'record-only reference',
      'bench/record-reference-server.ts',
      {
        DATA_DIR: fs.mkdtempSync(path.join(work, 'record-only-')),
        SECRET,
        GLIBC_TUNABLES: env.GLIBC_TUNABLES!,
      },
      singleBodies,
    );

    targets.push(target('(c) embedded single-event req/s ÷ baseline', max.rps / baseSingle.rps, '×', '>=', 0.5));
    targets.push(
      target('(c) embedded single-event req/s ÷ log-only reference', max.rps / logSingle.rps, '×', '>=', 0.9),
    );
    targets.push(
      target(
        '(c) ceiling: log-only reference ÷ baseline, single event',
        logSingle.rps / baseSingle.rps,
        '×',
        '>=',
        0.75,
        'no service can beat its own durable append',
      ),
    );
    targets.push(
      target(
        '(c) ceiling: log-and-store reference ÷ baseline, single event',
        logAndStoreMax.rps / baseSingle.rps,
        '×',
        '>=',
        0.5,
        'the durable append plus each body stored in PGlite, nothing else',
      ),
    );
    targets.push(
      figure(
        '(c) embedded single-event req/s ÷ log-and-store reference',
        max.rps / logAndStoreMax.rps,
        '×',
        "what the service's checks, rows and rollups cost",
      ),
    );
    targets.push(
      target(
        '(c) ceiling: record-only reference ÷ baseline, single event',
        recordOnlyMax.rps / baseSingle.rps,
        '×',
        '>=',
        0.5,
        "the service's rows, log and event insert with its rollups, no checks",
      ),
    );
    targets.push(
      figure(
        '(c) embedded single-event req/s ÷ record-only reference',
        max.rps / recordOnlyMax.rps,
        '×',
        "what the service's checks and hooks cost",
      ),
    );
    targets.push(...latencyTargets('embedded', max, half, logHalf));
    targets.push(
      target(
        '(f) embedded RSS during the max-load run',
        max.serviceRssMaxMiB ?? null,
        'MiB',
        '<=',
        400,
        `${max.serviceAnonymousMaxMiB} MiB anonymous; the rest is the log's and the store's files, mapped`,
      ),
    );
    targets.push(figure('(f) embedded CPU per event at max (service process)', max.serviceCpuUsPerEvent ?? null, 'µs'));
    for (const [index, trickle] of trickles.entries())
      targets.push(
        figure(
          `(f) embedded CPU per event at ${TRICKLE_RATES[index]} events/s`,
          trickle.serviceCpuUsPerEvent ?? null,
          'µs',
          trickle.serviceThreadsUsPerEvent
            ? `main ${trickle.serviceThreadsUsPerEvent.main}, store ${trickle.serviceThreadsUsPerEvent.busiestOther}, the rest ${trickle.serviceThreadsUsPerEvent.rest}`
            : undefined,
        ),
      );
    targets.push(
      figure(
        '(g) PGlite store reference, a raw body per request, req/s',
        referenceMax.rps,
        'req/s',
        'what PGlite commits on this machine',
      ),
    );
  }

  // (d) + (e) PostgreSQL, official batches
  let database: TestDatabase | undefined;
  if (runPostgres) {
    database = await createTestDatabase();
    cleanups.push(() => database!.drop());
    const { service, token } = await startService({ DATABASE_URL: database.url });
    const headers = { ...baseHeaders(token), 'content-encoding': 'gzip' };
    const url = `${service.url}/events`;
    const serviceUrl = service.url;
    const warmed = await warm({ url, headers, file: files.batchWarm, eventsPerRequest: 20, serviceUrl });
    const max = await measure({
      name: 'service PostgreSQL, 20-event gzip batch, max',
      url,
      headers,
      file: files.batchMax,
      eventsPerRequest: 20,
      service,
      deduplicates: true,
      databaseUrl: database.url,
      serviceUrl,
    });
    const rate = Math.max(1, Math.floor(max.rps / 2));
    const half = await measure({
      name: 'service PostgreSQL, 20-event gzip batch, half max',
      url,
      headers,
      file: files.batchHalf,
      eventsPerRequest: 20,
      rate,
      service,
      deduplicates: true,
      databaseUrl: database.url,
      serviceUrl,
    });
    const logHalf = await measure({
      name: 'log-only reference, 20-event gzip batch, same rate',
      url: logOnlyUrl,
      headers: gzip,
      file: files.batchHalf,
      eventsPerRequest: 20,
      rate,
    });
    let sustained: Sustained | undefined;
    let sustainedRequests = 0;
    if (SUSTAIN > 0) {
      log(`generating bodies for the sustained run (${SUSTAIN} s)`);
      const count = Math.ceil(max.rps * 1.5 * SUSTAIN);
      const file = bodyFile('batch-sustain', officialBatchBodies({ appName: APP, tag: 'bs', count }));
      sustained = await sustain({ url, headers, file, eventsPerRequest: 20, serviceUrl });
      sustainedRequests = Math.round((sustained.acknowledgedPerSec * sustained.seconds) / 20);
      if (sustainedRequests > count)
        notes.push('the sustained run sent some bodies twice (duplicates were skipped by the store)');
    }
    await service.stop();
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    const {
      rows: [counts],
    } = await client.query<{ rows: number; counted: number }>(
      `SELECT (SELECT count(*) FROM events)::float8 AS rows, (SELECT coalesce(sum(events), 0) FROM daily_event_counts)::float8 AS counted`,
    );
    await client.end();
    const acknowledged = (warmed + max.requests + half.requests + sustainedRequests) * 20;
    results.postgres = { storedRows: counts!.rows, rollupEvents: counts!.counted, acknowledged, sustained };
    if (counts!.rows !== counts!.counted)
      throw new Error(`rollups (${counts!.counted}) differ from the stored rows (${counts!.rows})`);
    if (max.bodyWraps + half.bodyWraps === 0 && counts!.rows < acknowledged - 3 * CONNECTIONS * 20) {
      throw new Error(`PostgreSQL holds ${counts!.rows} events, ${acknowledged} were acknowledged`);
    }

    const rowsOnly = await startReference('events', { DATABASE_URL: database.url });
    const rowsUrl = `${rowsOnly.url}/events`;
    await warm({ url: rowsUrl, headers: gzip, file: files.batchWarm, eventsPerRequest: 20 });
    const referenceMax = await measure({
      name: 'store reference PostgreSQL, bare event rows, max',
      url: rowsUrl,
      headers: gzip,
      file: files.batchMax,
      eventsPerRequest: 20,
      service: rowsOnly,
      deduplicates: true,
      databaseUrl: database.url,
    });
    await rowsOnly.stop();
    const copied = await startReference('copy', { DATABASE_URL: database.url });
    const copiedUrl = `${copied.url}/events`;
    await warm({ url: copiedUrl, headers: gzip, file: files.batchWarm, eventsPerRequest: 20 });
    // the same bodies again: the table is emptied first, so each row is new to it
    await truncateReferenceEvents(database.url);
    const copyMax = await measure({
      name: 'store reference PostgreSQL, bare event rows by COPY, max',
      url: copiedUrl,
      headers: gzip,
      file: files.batchMax,
      eventsPerRequest: 20,
      service: copied,
      deduplicates: true,
      databaseUrl: database.url,
    });
    await copied.stop();

    targets.push(
      target(
        '(d) PostgreSQL acknowledged events/s, 20-event gzip batches, burst',
        max.eventsPerSec,
        'events/s',
        '>=',
        150_000,
      ),
    );
    targets.push(
      target(
        '(d) ceiling: log-only reference, 20-event gzip batches',
        logBatch ? logBatch.eventsPerSec : null,
        'events/s',
        '>=',
        150_000,
      ),
    );
    targets.push(
      target(
        `(d) PostgreSQL sustained ${SUSTAIN} s, acknowledged and loaded`,
        sustained?.keptUpPerSec ?? null,
        'events/s',
        '>=',
        100_000,
        sustained
          ? `${sustained.acknowledgedPerSec} acknowledged, ${sustained.loadedPerSec} loaded per s; backlog ${sustained.backlogStart} → ${sustained.backlogEnd} requests`
          : 'not run',
      ),
    );
    targets.push(...latencyTargets('PostgreSQL', max, half, logHalf));
    targets.push(
      figure('(f) PostgreSQL CPU per event at max: service process', max.serviceCpuUsPerEvent ?? null, 'µs'),
    );
    targets.push(
      figure('(f) PostgreSQL CPU per event at max: PostgreSQL backends', max.postgresCpuUsPerEvent ?? null, 'µs'),
    );
    targets.push(
      figure(
        '(g) PostgreSQL store reference, bare event rows',
        referenceMax.eventsPerSec,
        'events/s',
        `what PostgreSQL stores on this machine; its CPU ${referenceMax.postgresCpuUsPerEvent ?? 'n/a'} µs/event`,
      ),
    );
    targets.push(
      figure(
        '(g) PostgreSQL store reference, bare event rows by COPY',
        copyMax.eventsPerSec,
        'events/s',
        `its CPU ${copyMax.postgresCpuUsPerEvent ?? 'n/a'} µs/event`,
      ),
    );
    results.baselineBatchMax = baseBatch && { rps: round(baseBatch.rps, 0), p99Ms: baseBatch.p99Ms };
  }

  const loadEnd = os.loadavg();
  const summary = {
    bench: 'ingest',
    date: started.toISOString(),
    machine: {
      ...machineInfo(),
      loadavgAtStart: loadStart.map((v) => round(v)),
      loadavgAtEnd: loadEnd.map((v) => round(v)),
    },
    loadGenerator: tool,
    settings: { durationSec: DURATION, warmupSec: WARMUP, connections: CONNECTIONS, sustainSec: SUSTAIN },
    phases,
    results,
    targets,
    notes,
  };

  console.log(
    '\nIngest bench — ' +
      `${summary.machine.cpus} × ${summary.machine.cpuModel}, Node ${summary.machine.node}, ${tool}, ` +
      `load average at start ${summary.machine.loadavgAtStart.join(' ')}, at end ${summary.machine.loadavgAtEnd.join(' ')}\n`,
  );
  console.log(
    formatTable(
      [
        'phase',
        'req/s',
        'events/s',
        'p50 ms',
        'p99 ms',
        'CPU µs/event (node | pg)',
        'of it: main | busiest other thread | rest',
        'RSS MiB (anonymous)',
        'freshness p99 s',
      ],
      phases.map((p) => [
        p.name + (p.rate ? ` @${p.rate}/s` : ''),
        round(p.rps, 0),
        round(p.eventsPerSec, 0),
        round(p.p50Ms, 2),
        round(p.p99Ms, 2),
        p.serviceCpuUsPerEvent === undefined
          ? ''
          : `${p.serviceCpuUsPerEvent}${p.postgresCpuUsPerEvent === undefined ? '' : ` | ${p.postgresCpuUsPerEvent}`}`,
        p.serviceThreadsUsPerEvent
          ? `${p.serviceThreadsUsPerEvent.main} | ${p.serviceThreadsUsPerEvent.busiestOther} | ${p.serviceThreadsUsPerEvent.rest}`
          : '',
        p.serviceRssMaxMiB === undefined ? '' : `${p.serviceRssMaxMiB} (${p.serviceAnonymousMaxMiB})`,
        p.freshnessP99Sec === undefined ? '' : `<= ${p.freshnessP99Sec ?? 'n/a'}`,
      ]),
    ),
  );
  printSummary(summary, targets, JSON_OUT, notes);
}

await runBenchMain(main, cleanups, work);

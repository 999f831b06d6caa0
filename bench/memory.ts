// Memory bench: the resident size (VmRSS) of the real service (`node --import tsx src/main.ts`, embedded
// store) when idle, in three states of one DATA_DIR:
//   (a) fresh: a new DATA_DIR, the service started, then left idle;
//   (b) reopened: the same DATA_DIR after a stop (SIGTERM) and a new start, idle;
//   (c) after a burst: a few thousand single-event requests through a token made with the CLI, then idle;
// and, for reference, on the same runtime: a bare Fastify server (bench/baseline-server.ts), and the same
// with the embedded store behind it (bench/reference-server.ts) on a reopened DATA_DIR: the least any
// service on this store holds.
// Idle is settled: V8 gives memory back in collections some 8 s apart once the work stops, so each state
// waits at least --idle seconds and until RSS has not fallen for 15 s (at most --idle + 60 s); its figure
// is the last sample. The RSS 5 s after /healthz answered and the peak since start (VmHWM) are
// shown too, and the settled RSS is split into anonymous memory (heaps, WebAssembly memory) and file-backed
// pages (code). Targets: idle fresh and idle reopened <= 150 MB. Prints a table and one JSON document;
// exits non-zero only when something failed to run.
//
//   node --import tsx bench/memory.ts [--idle 20] [--requests 5000] [--concurrency 32] [--json-out file]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCliJson } from '../test/helpers/service-process.ts';
import { singleEventBodies } from './lib/bodies.ts';
import {
  machineInfo,
  rssSampler,
  runBenchMain,
  startNode,
  type NodeProcess,
  UNLIMITED_SERVICE_SETTINGS,
} from './lib/processes.ts';
import { formatTable, parseArgs, printSummary, round, target, uptimeLine } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const IDLE_SEC = Number(args.get('idle') ?? 20);
const REQUESTS = Number(args.get('requests') ?? 5_000);
const CONCURRENCY = Number(args.get('concurrency') ?? 32);
const JSON_OUT = args.get('json-out');

const APP = 'memory_app';
const DOMAIN = 'memory.example.com';
const MB = 1e6;
/** RSS has settled once it has not fallen by more than this over SETTLE_WINDOW_SEC */
const SETTLE_BYTES = 2 ** 20;
const SETTLE_WINDOW_SEC = 15;

const log = (message: string) => console.error(`[bench memory ${new Date().toISOString().slice(11, 19)}] ${message}`);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-memory-'));
const cleanups: (() => Promise<unknown>)[] = [];

interface Status {
  /** VmRSS */
  rss: number;
  /** RssAnon: heaps, WebAssembly memory, thread stacks */
  anon: number;
  /** RssFile + RssShmem: code and mapped files */
  file: number;
  /** VmHWM: the highest RSS since the process started */
  peak: number;
}

function status(pid: number): Status {
  const kB = (text: string, field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) * 1024;
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    return {
      rss: kB(text, 'VmRSS'),
      anon: kB(text, 'RssAnon'),
      file: kB(text, 'RssFile') + kB(text, 'RssShmem'),
      peak: kB(text, 'VmHWM'),
    };
  } catch {
    return { rss: 0, anon: 0, file: 0, peak: 0 };
  }
}

interface Idle extends Status {
  /** RSS 5 s after the idle wait began */
  rssAt5s: number;
  /** seconds waited until settled */
  settledAfterSec: number;
}

/** samples the process every second until it has been idle IDLE_SEC and its RSS stopped falling */
async function idle(child: NodeProcess, name: string): Promise<Idle> {
  const samples: number[] = [];
  let rssAt5s = 0;
  for (let second = 1; ; second++) {
    await sleep(1000);
    if (!child.running()) throw new Error(`${name} stopped while idle:\n${child.output()}`);
    samples.push(status(child.pid).rss);
    if (second === 5) rssAt5s = samples.at(-1)!;
    const window = samples.slice(-SETTLE_WINDOW_SEC - 1);
    const settled =
      second >= IDLE_SEC && window.length > SETTLE_WINDOW_SEC && window[0]! - Math.min(...window) <= SETTLE_BYTES;
    if (settled || second >= IDLE_SEC + 60) {
      const now = status(child.pid);
      log(
        `${name}: ${round(now.rss / MB, 0)} MB after ${second} s idle (${round(rssAt5s / MB, 0)} MB at 5 s, peak ${round(now.peak / MB, 0)} MB)`,
      );
      return { ...now, rssAt5s, settledAfterSec: second };
    }
  }
}

/** REQUESTS single-event POSTs, CONCURRENCY at a time; throws unless every one is answered 201 */
async function burst(url: string, token: string): Promise<{ seconds: number; rps: number }> {
  const bodies = singleEventBodies({ appName: APP, tag: 'mem', count: REQUESTS });
  const headers = { 'content-type': 'application/json', origin: `https://${DOMAIN}`, 'tga-auth-token': token };
  let next = 0;
  const refused: string[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++]!.toString('utf8');
        const response = await fetch(url, { method: 'POST', headers, body });
        const text = await response.text();
        if (response.status !== 201 && refused.length < 5) refused.push(`${response.status} ${text}`);
      }
    }),
  );
  if (refused.length > 0) throw new Error(`requests were not stored: ${refused.join('; ')}`);
  const seconds = (performance.now() - started) / 1000;
  return { seconds: round(seconds, 2), rps: round(REQUESTS / seconds, 0) };
}

/** every acknowledged event shows in `apps show` (within a few seconds, should the store load them later) */
async function expectStored(env: Record<string, string>, expected: number): Promise<void> {
  let stored = 0;
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await sleep(250)) {
    stored = (await runCliJson<{ events_total: number }>(env, ['apps', 'show', '--app-name', APP])).events_total;
    if (stored === expected) return;
  }
  throw new Error(`${expected} events were acknowledged, the store holds ${stored}`);
}

async function start(script: string, env: Record<string, string>): Promise<NodeProcess> {
  const started = await startNode(script, env);
  cleanups.push(() => started.stop());
  return started;
}

async function stop(child: NodeProcess): Promise<void> {
  const exit = await child.stop();
  if (exit.code !== 0) throw new Error(`did not stop cleanly (${exit.code ?? exit.signal}):\n${child.output()}`);
}

async function main(): Promise<void> {
  const started = new Date();
  log(`${uptimeLine()}; idle at least ${IDLE_SEC} s per state, burst of ${REQUESTS} requests`);
  const env: Record<string, string> = {
    DATA_DIR: path.join(work, 'data'),
    SECRET: 'memory-bench-secret-'.padEnd(48, 'x'),
    ...UNLIMITED_SERVICE_SETTINGS,
  };

  let service = await start('src/main.ts', env);
  const fresh = await idle(service, 'service, fresh DATA_DIR');
  await stop(service);

  service = await start('src/main.ts', env);
  const reopened = await idle(service, 'service, reopened DATA_DIR');
  const { token } = await runCliJson<{ token: string }>(env, [
    'tokens',
    'create',
    '--bot',
    '@memory_app_bot',
    '--domain',
    DOMAIN,
    '--app-name',
    APP,
  ]);
  const sampler = rssSampler(service.pid);
  const load = await burst(`${service.url}/events`, token);
  const burstPeak = sampler.stop();
  log(`burst: ${REQUESTS} requests in ${load.seconds} s, peak ${round(burstPeak / MB, 0)} MB`);
  await expectStored(env, REQUESTS);
  const afterBurst = await idle(service, `service after ${REQUESTS} single events`);
  await stop(service);

  const baseline = await start('bench/baseline-server.ts', {});
  const bareFastify = await idle(baseline, 'bare Fastify');
  await stop(baseline);
  const reference = await start('bench/reference-server.ts', { DATA_DIR: env.DATA_DIR!, REFERENCE: 'requests' });
  const bareStore = await idle(reference, 'bare Fastify + embedded store, reopened DATA_DIR');
  await stop(reference);

  const states = { fresh, reopened, afterBurst, bareFastify, bareStore };
  const targets = [
    target('idle RSS, fresh DATA_DIR', fresh.rss / MB, 'MB', '<=', 150),
    target(
      'idle RSS, reopened DATA_DIR',
      reopened.rss / MB,
      'MB',
      '<=',
      150,
      `reference: bare Fastify + the embedded store idles at ${round(bareStore.rss / MB, 0)} MB, bare Fastify at ${round(bareFastify.rss / MB, 0)} MB`,
    ),
    target(
      `idle RSS after a burst of ${REQUESTS} single events`,
      afterBurst.rss / MB,
      'MB',
      '<=',
      Infinity,
      'figure, no target',
    ),
    target(`peak RSS during the burst (${load.rps} req/s)`, burstPeak / MB, 'MB', '<=', Infinity, 'figure, no target'),
    target('peak RSS of a fresh start (VmHWM)', fresh.peak / MB, 'MB', '<=', Infinity, 'figure, no target'),
  ];
  const megabytes = (value: number) => round(value / MB, 1);
  const summary = {
    bench: 'memory',
    date: started.toISOString(),
    machine: machineInfo(),
    settings: { idleSec: IDLE_SEC, settleWindowSec: SETTLE_WINDOW_SEC, requests: REQUESTS, concurrency: CONCURRENCY },
    idleMB: Object.fromEntries(
      Object.entries(states).map(([name, s]) => [
        name,
        {
          rss: megabytes(s.rss),
          rssAt5s: megabytes(s.rssAt5s),
          anon: megabytes(s.anon),
          file: megabytes(s.file),
          peak: megabytes(s.peak),
          settledAfterSec: s.settledAfterSec,
        },
      ]),
    ),
    burst: { ...load, peakRssMB: megabytes(burstPeak) },
    targets,
  };
  console.log(`\nMemory bench — embedded store, idle at least ${IDLE_SEC} s and until RSS stops falling\n`);
  const row = (name: string, s: Idle) => [
    name,
    round(s.rss / MB, 0),
    round(s.rssAt5s / MB, 0),
    round(s.anon / MB, 0),
    round(s.file / MB, 0),
    round(s.peak / MB, 0),
    s.settledAfterSec,
  ];
  console.log(
    formatTable(
      ['state', 'idle RSS MB', 'at 5 s', 'anonymous', 'file-backed', 'peak since start', 'idle s'],
      [
        row('service, fresh DATA_DIR', fresh),
        row('service, reopened DATA_DIR', reopened),
        row(`service after ${REQUESTS} single events`, afterBurst),
        row('reference: bare Fastify', bareFastify),
        row('reference: bare Fastify + embedded store (reopened)', bareStore),
      ],
    ),
  );
  printSummary(summary, targets, JSON_OUT);
}

await runBenchMain(main, cleanups, work);

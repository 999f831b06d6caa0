// Launch checks bench. The service built and started as `npm start` runs it (embedded store), single-event plain JSON
// requests at max, in one run and in turns (two rounds), each request a distinct user and launch:
//   (a) app-init without launch data (what the official client sends);
//   (b) app-init carrying Telegram-signed launch data to an app without a bot id: read, not verified;
//   (c) the same to an app with its bot id: its Ed25519 signature verified, the session kept as verified.
// Target: (c) >= 0.9 x (b) in req/s (verification never costs an app its ingest); (c) against (a) and the service's CPU
// per event of each (the HTTP thread's and the embedded store's thread's apart) are printed. Then (b) and (c) as the
// SDK sends a launch: its app-init and 9 more events of the session in one request (events/s, verified against read). Then the check's own cost per launch, in this process: LaunchChecker.check over
// distinct signed launches, and node's Ed25519 verify alone.
//
//   node --import tsx bench/launch-check.ts [--duration 10] [--warmup 5] [--connections 64] [--rounds 2] [--json-out file]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LaunchChecker } from '../src/events/request/launch-check.ts';
import { NPM_START_TUNABLES, runCliJson, startServiceProcess } from '../test/helpers/service-process.ts';
import { launchSigner } from '../test/helpers/telegram-launch.ts';
import { writeBodyFile } from './lib/bodies.ts';
import { loadGeneratorName, runLoad } from './lib/loadgen.ts';
import {
  cpuSeconds,
  machineInfo,
  runBenchMain,
  threadCpuSeconds,
  threadSplit,
  UNLIMITED_SERVICE_SETTINGS,
} from './lib/processes.ts';
import { drainedWithin } from './lib/service-metrics.ts';
import { figure, median, parseArgs, printSummary, round, type Target, target, uptimeLine } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const DURATION = Number(args.get('duration') ?? 10);
const WARMUP = Number(args.get('warmup') ?? 5);
const CONNECTIONS = Number(args.get('connections') ?? 64);
const ROUNDS = Number(args.get('rounds') ?? 2);
const JSON_OUT = args.get('json-out');
/** a generous upper bound of the service's single-event rate: a phase never runs out of distinct launches */
const RATE_CAP = Number(args.get('rate-cap') ?? 12_000);
const BOT_ID = 7_500_600_700;
const DOMAIN = 'bench.example.com';
const DRAIN_TIMEOUT_MS = 120_000;

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-launch-'));
const cleanups: (() => Promise<unknown>)[] = [];
const signer = launchSigner();

type Kind =
  | 'without data'
  | 'read, no bot id'
  | 'verified'
  | 'launch of 10 events, read, no bot id'
  | 'launch of 10 events, verified';

/** events of a launch beside its app-init, in the session mix */
const SESSION_EVENTS = 9;

/**
 * distinct bodies of one phase: a user and a launch each, its app-init with its signed launch data or without, and
 * (sessionEvents) that many more events of its session in the same request
 */
function bodies(appName: string, tag: number, count: number, withData: boolean, sessionEvents = 0): string {
  const list: Buffer[] = [];
  const now = Date.now();
  for (let n = 0; n < count; n++) {
    const user = 100_000_000 + tag * 10_000_000 + n;
    const base = {
      session_id: crypto.randomUUID(),
      user_id: user,
      app_name: appName,
      platform: 'android',
      locale: 'en',
    };
    const event: Record<string, unknown> = {
      event_name: 'app-init',
      ...base,
      client_timestamp: String(now - (n % 60_000)),
    };
    if (withData)
      event.init_data = signer.sign({
        botId: BOT_ID,
        user: { id: user, first_name: 'Bench', username: `bench_${n}`, language_code: 'en', allows_write_to_pm: true },
      } as Parameters<typeof signer.sign>[0]);
    const more = Array.from({ length: sessionEvents }, (_, i) => ({
      event_name: 'custom-event',
      ...base,
      client_timestamp: String(now - (n % 60_000) + 1 + i),
      custom_data: { name: 'tap', screen: 'catalog', seq: i },
    }));
    list.push(Buffer.from(JSON.stringify(sessionEvents === 0 ? event : [event, ...more])));
  }
  return writeBodyFile(path.join(work, `${tag}.bin`), list).file;
}

/** the check's own cost in this process: µs per launch over distinct signed launches, and per bare verify */
async function checkCost(): Promise<{ checkUs: number; verifyUs: number }> {
  const checker = new LaunchChecker({
    publicKeyHex: signer.publicKeyHex,
    testPublicKeyHex: signer.publicKeyHex,
    maxAgeSeconds: 86_400,
    proofOf: (signature) => crypto.createHmac('sha256', 'bench').update(signature).digest().subarray(0, 16),
  });
  const launches = Array.from({ length: 20_000 }, (_, n) => ({
    user: String(1 + n),
    event: { init_data: signer.sign({ botId: BOT_ID, user: { id: 1 + n, first_name: 'Bench' } }) },
  }));
  for (const { event, user } of launches.slice(0, 2_000)) await checker.check(event, String(BOT_ID), user);
  let started = performance.now();
  for (const { event, user } of launches)
    if ((await checker.check(event, String(BOT_ID), user)).check !== 'verified')
      throw new Error('a bench launch did not verify');
  const checkUs = ((performance.now() - started) * 1000) / launches.length;
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
  const data = Buffer.from('x'.repeat(300));
  const signature = crypto.sign(null, data, privateKey);
  started = performance.now();
  for (let i = 0; i < 20_000; i++) crypto.verify(null, data, publicKey, signature);
  return { checkUs: round(checkUs, 1), verifyUs: round(((performance.now() - started) * 1000) / 20_000, 1) };
}

async function main(): Promise<void> {
  console.error(`[launch-check] ${uptimeLine()}; load generator ${loadGeneratorName()}`);
  const env = {
    DATA_DIR: fs.mkdtempSync(path.join(work, 'data-')),
    SECRET: 'bench-secret-'.padEnd(48, 'x'),
    GLIBC_TUNABLES: NPM_START_TUNABLES,
    TELEGRAM_PUBLIC_KEY: signer.publicKeyHex,
    ...UNLIMITED_SERVICE_SETTINGS,
  };
  const service = await startServiceProcess(env);
  cleanups.push(() => service.stop());
  const tokenOf = async (appName: string, botId?: number) =>
    (
      await runCliJson<{ token: string }>(env, [
        ...['tokens', 'create', '--bot', '@launch_bench_bot', '--domain', DOMAIN, '--app-name', appName],
        ...(botId === undefined ? [] : ['--bot-id', String(botId)]),
      ])
    ).token;
  const apps = { withBot: await tokenOf('launch_bench', BOT_ID), withoutBot: await tokenOf('launch_bench_nobot') };
  const phases: { kind: Kind; app: string; token: string; withData: boolean; sessionEvents?: number }[] = [
    { kind: 'without data', app: 'launch_bench', token: apps.withBot, withData: false },
    { kind: 'read, no bot id', app: 'launch_bench_nobot', token: apps.withoutBot, withData: true },
    { kind: 'verified', app: 'launch_bench', token: apps.withBot, withData: true },
    {
      kind: 'launch of 10 events, read, no bot id',
      app: 'launch_bench_nobot',
      token: apps.withoutBot,
      withData: true,
      sessionEvents: SESSION_EVENTS,
    },
    {
      kind: 'launch of 10 events, verified',
      app: 'launch_bench',
      token: apps.withBot,
      withData: true,
      sessionEvents: SESSION_EVENTS,
    },
  ];
  const headers = (token: string) => ({
    'content-type': 'application/json',
    'analytics-auth-token': token,
    origin: `https://${DOMAIN}`,
  });
  const url = `${service.url}/events`;
  let tag = 0;
  const warm = bodies('launch_bench', ++tag, RATE_CAP * Math.max(1, WARMUP), true);
  await runLoad({ url, headers: headers(apps.withBot), bodyFile: warm, connections: CONNECTIONS, durationSec: WARMUP });
  await drainedWithin(service.url, DRAIN_TIMEOUT_MS);

  type Result = {
    rps: number[];
    cpuUsPerEvent: number[];
    mainUsPerEvent: number[];
    storeUsPerEvent: number[];
    errors: number;
  };
  const empty = (): Result => ({ rps: [], cpuUsPerEvent: [], mainUsPerEvent: [], storeUsPerEvent: [], errors: 0 });
  const results: Record<Kind, Result> = {
    'without data': empty(),
    'read, no bot id': empty(),
    verified: empty(),
    'launch of 10 events, read, no bot id': empty(),
    'launch of 10 events, verified': empty(),
  };
  for (let round_ = 0; round_ < ROUNDS; round_++) {
    for (const phase of phases) {
      const perRequest = 1 + (phase.sessionEvents ?? 0);
      // requests of a launch of 10 events come at least half as fast as single events: never a body sent twice
      const requests = perRequest === 1 ? RATE_CAP * DURATION : Math.ceil((RATE_CAP * DURATION) / 2);
      const file = bodies(phase.app, ++tag, requests, phase.withData, phase.sessionEvents);
      const cpuBefore = cpuSeconds(service.pid);
      const threadsBefore = threadCpuSeconds(service.pid);
      const load = await runLoad({
        url,
        headers: headers(phase.token),
        bodyFile: file,
        connections: CONNECTIONS,
        durationSec: DURATION,
      });
      // the loader may still be storing what was acknowledged: its CPU counts too
      await drainedWithin(service.url, DRAIN_TIMEOUT_MS);
      const cpu = cpuSeconds(service.pid) - cpuBefore;
      const split = threadSplit(threadsBefore, threadCpuSeconds(service.pid), service.pid);
      const result = results[phase.kind];
      // events a second (a request of a single event: requests a second)
      result.rps.push(round(load.rps * perRequest, 0));
      const perEvent = (seconds: number) => round((seconds * 1e6) / Math.max(1, load.requests * perRequest), 1);
      result.cpuUsPerEvent.push(perEvent(cpu));
      result.mainUsPerEvent.push(perEvent(split.main));
      result.storeUsPerEvent.push(perEvent(split.busiestOther));
      result.errors += load.errorStatus + load.transportErrors + load.bodyWraps;
      console.error(`[launch-check] round ${round_ + 1}, ${phase.kind}: ${round(load.rps * perRequest, 0)} events/s`);
      fs.rmSync(file);
    }
  }
  const rps = (kind: Kind) => median(results[kind].rps);
  const cost = await checkCost();
  const targets: Target[] = [
    target(
      'single app-init: verified / read without verification',
      round(rps('verified') / rps('read, no bot id'), 3),
      'x',
      '>=',
      0.9,
    ),
    figure('single app-init: verified / without launch data', round(rps('verified') / rps('without data'), 3), 'x'),
    figure(
      'launch of 10 events: verified / read without verification',
      round(rps('launch of 10 events, verified') / rps('launch of 10 events, read, no bot id'), 3),
      'x',
    ),
    ...(Object.keys(results) as Kind[]).map((kind) =>
      figure(
        `${kind}: events/s (median of ${ROUNDS})`,
        rps(kind),
        'events/s',
        `rounds ${results[kind].rps.join(', ')}`,
      ),
    ),
    ...(Object.keys(results) as Kind[]).flatMap((kind) => [
      figure(`${kind}: service CPU per event`, median(results[kind].cpuUsPerEvent), 'µs'),
      figure(`${kind}: of it, the HTTP thread`, median(results[kind].mainUsPerEvent), 'µs'),
      figure(`${kind}: of it, the store's thread`, median(results[kind].storeUsPerEvent), 'µs'),
    ]),
    figure('LaunchChecker.check per launch, one after another', cost.checkUs, 'µs'),
    figure('Ed25519 verify alone (node:crypto)', cost.verifyUs, 'µs'),
  ];
  const errors = Object.values(results).reduce((sum, result) => sum + result.errors, 0);
  printSummary(
    { bench: 'launch-check', date: new Date().toISOString(), machine: machineInfo(), results, cost, targets },
    targets,
    JSON_OUT,
    errors > 0 ? [`${errors} refused requests, transport errors or reused bodies: the figures are not clean`] : [],
  );
}

await runBenchMain(main, cleanups, work);

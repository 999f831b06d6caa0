// Lived-in bench: an app's months of events (150k events, 20k users, 89 days by default) arrive in the order of their
// client times through a real service process (POST /events), with an erasure and a restart (which runs the retention
// purge) halfway, no ANALYZE by hand, and PostgreSQL's autovacuum off. Then every dashboard card, insight, read API call
// and the public link is timed for 90 and 365 days, on both stores; while the slowest runs again (for 5 s), /healthz
// latency and ingest p50 are measured against ingest p50 on a quiet service (5 s, /healthz polled alike). Prints a table per store and the targets.
//
//   node --import tsx bench/lived-in.ts [--events 150000] [--users 20000] [--days 89] [--only postgres|embedded]
//        [--call-timeout 120] [--cpu-prof dir] [--json-out file]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import pg from 'pg';
import { available } from '../test/helpers/environment.ts';
import { createTestDatabase } from '../test/helpers/postgres.ts';
import { runCli, startNodeServer } from '../test/helpers/service-process.ts';
import { cpuProfileSettings, type NodeProcess, UNLIMITED_SERVICE_SETTINGS } from './lib/processes.ts';
import { drainedWithin } from './lib/service-metrics.ts';
import { formatTable, median, parseArgs, printSummary, round, target, uptimeLine, type Target } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const EVENTS = Number(args.get('events') ?? 150_000);
const USERS = Number(args.get('users') ?? 20_000);
const DAYS = Number(args.get('days') ?? 89);
const ONLY = args.get('only');
const CALL_TIMEOUT_S = Number(args.get('call-timeout') ?? 120);
const JSON_OUT = args.get('json-out');
/** a directory for the service's CPU profiles; the window while the slowest call runs gets one of its own */
const CPU_PROF = args.get('cpu-prof');
const APP = 'lived_in';
const ORIGIN = 'https://lived.example.com';
const OWNER = '7007';
const DAY_MS = 86_400_000;
const SENDERS = 4;
/** how long ingest is timed on the quiet service, and at least while the slowest call runs again and again */
const WINDOW_MS = 5_000;
/** a start on a busy machine (a PGlite cluster made, migrations applied) */
const startService = (env: Record<string, string>) => startNodeServer('src/main.ts', env, 180_000);

/** a CLI command's JSON answer, with as long to answer as a start (an erase on a busy machine takes a while) */
async function runCliJson<T = Record<string, unknown>>(env: Record<string, string>, args: string[]): Promise<T> {
  const result = await runCli(env, [...args, '--json'], 180_000);
  if (result.exitCode !== 0) throw new Error(`cli ${args.join(' ')} exited with ${result.exitCode}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

const log = (message: string) => console.error(`[bench lived-in ${new Date().toISOString().slice(11, 19)}] ${message}`);

function uuid(): string {
  return crypto.randomUUID();
}

/** one session of a user on a day: a launch, custom events, sometimes a wallet connection, a hide */
function session(user: number, at: number, events: number): Record<string, unknown>[] {
  const base = {
    session_id: uuid(),
    user_id: 100_000_000 + user,
    app_name: APP,
    is_premium: user % 5 === 0,
    platform: ['ios', 'android', 'tdesktop', 'weba'][user % 4],
    locale: ['en', 'ru', 'es', 'de', 'pt-br'][user % 5],
    start_param: user % 3 === 0 ? `campaign_${user % 12}` : '',
  };
  const out: Record<string, unknown>[] = [{ ...base, event_name: 'app-init', client_timestamp: String(at) }];
  const wallet = user % 4 === 0;
  for (let n = 1; n < events - 1; n++) {
    const time = String(at + n * 1_000);
    if (wallet && n === 1) out.push({ ...base, event_name: 'connection-started', client_timestamp: time });
    else if (wallet && n === 2) out.push({ ...base, event_name: 'connection-completed', client_timestamp: time });
    else
      out.push({
        ...base,
        event_name: 'custom-event',
        client_timestamp: time,
        custom_data: {
          name: ['screen_view', 'purchase_clicked', 'level_done'][n % 3],
          screen: `s${n % 9}`,
          sku: `sku_${user % 25}`,
        },
      });
  }
  out.push({ ...base, event_name: 'app-hide', client_timestamp: String(at + events * 1_000) });
  return out;
}

/** the data set's request bodies in the order of their client times: users join over the days, sessions of ~20 events */
function* requests(now: number): Generator<{ body: Buffer; events: number; day: number }> {
  const sessions = Math.ceil(EVENTS / 20);
  let sent = 0;
  for (let n = 0; n < sessions && sent < EVENTS; n++) {
    const day = Math.floor((n / sessions) * DAYS);
    const at = now - (DAYS - day) * DAY_MS + Math.floor(((n % 97) / 97) * (DAY_MS - 3_600_000)) + 600_000;
    // users arrive over time: a session is by one of the users seen so far
    const known = Math.max(50, Math.ceil(USERS * ((day + 1) / DAYS)));
    const user = n < USERS ? n % known : Math.floor(Math.random() * known);
    const events = Math.min(EVENTS - sent, 20);
    sent += events;
    yield { body: zlib.gzipSync(JSON.stringify(session(user, at, events))), events, day };
  }
}

interface Harness {
  service: NodeProcess;
  token: string;
  readKey: string;
  cookie: string;
  share: string;
}

async function post(url: string, token: string, body: Buffer): Promise<number> {
  const started = performance.now();
  const answer = await fetch(`${url}/events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      'tga-auth-token': token,
      origin: ORIGIN,
    },
    body: new Uint8Array(body),
  });
  await answer.arrayBuffer();
  if (answer.status !== 201) throw new Error(`POST /events answered ${answer.status}`);
  return performance.now() - started;
}

async function load(h: Harness, from: number, to: number, all: { body: Buffer; day: number }[]): Promise<void> {
  let next = from;
  const sender = async () => {
    while (next < to) await post(h.service.url, h.token, all[next++]!.body);
  };
  await Promise.all(Array.from({ length: SENDERS }, sender));
}

async function signIn(env: Record<string, string>, url: string): Promise<string> {
  const { url: link } = await runCliJson<{ url: string }>(env, ['login-link', '--telegram-id', OWNER]);
  const parsed = new URL(link);
  const answer = await fetch(`${url}${parsed.pathname}${parsed.search}`, { redirect: 'manual' });
  const cookie = answer.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  if (!cookie) throw new Error(`the login link answered ${answer.status} without a cookie`);
  return cookie;
}

interface Call {
  name: string;
  path: string;
  auth: 'site' | 'read' | 'public';
}

function calls(h: Harness, days: number): Call[] {
  const to = new Date().toISOString().slice(0, 10);
  const from = new Date(Date.now() - (days - 1) * DAY_MS).toISOString().slice(0, 10);
  const period = `from=${from}&to=${to}`;
  const read = (name: string, p: string): Call => ({
    name: `read API ${name}`,
    path: `/api/v1/apps/${APP}/${p}`,
    auth: 'read',
  });
  const list: Call[] = [
    read('summary', `summary?${period}`),
    read('retention', `retention?${period}`),
    read('funnel', `funnel?${period}&steps=app-init,connection-started,connection-completed`),
    read('custom-events', `custom-events?${period}`),
    read('custom property', `custom-events/purchase_clicked/properties/sku?${period}`),
    read('campaigns', `campaigns?${period}`),
    read('revenue', `revenue?${period}`),
    read('retention ios', `retention?${period}&platform=ios`),
  ];
  // the site and the public link offer 7, 30 and 90 days
  if (days <= 90) {
    const site = (name: string, p: string): Call => ({
      name: `site ${name}`,
      path: `/api/apps/${APP}/${p}`,
      auth: 'site',
    });
    list.push(
      site('dashboard', `dashboard?days=${days}`),
      site('insights', `insights?days=${days}`),
      site('funnel', `funnel?days=${days}&steps=app-init,connection-started,connection-completed`),
      site('custom property', `custom-events/purchase_clicked/properties/sku?days=${days}`),
      site('recent', `recent?days=${days}`),
      site('dashboard ios', `dashboard?days=${days}&platform=ios`),
      site('insights ios', `insights?days=${days}&platform=ios`),
      { name: 'public link', path: `/api/share/${h.share}/dashboard?days=${days}`, auth: 'public' },
      { name: 'public link ios', path: `/api/share/${h.share}/dashboard?days=${days}&platform=ios`, auth: 'public' },
    );
  }
  return list;
}

/** seconds and status of one call (status 0: no answer within the call timeout) */
async function timeCall(h: Harness, call: Call): Promise<{ seconds: number; status: number }> {
  const headers: Record<string, string> =
    call.auth === 'site' ? { cookie: h.cookie } : call.auth === 'read' ? { authorization: `Bearer ${h.readKey}` } : {};
  const started = performance.now();
  try {
    const answer = await fetch(`${h.service.url}${call.path}`, {
      headers,
      signal: AbortSignal.timeout(CALL_TIMEOUT_S * 1000),
    });
    await answer.arrayBuffer();
    return { seconds: (performance.now() - started) / 1000, status: answer.status };
  } catch {
    return { seconds: (performance.now() - started) / 1000, status: 0 };
  }
}

/** ingest latencies (ms) of single-session posts, one after another, until `until` resolves */
async function ingestWhile(h: Harness, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const latencies: number[] = [];
  let n = 0;
  while (!done) {
    const body = zlib.gzipSync(JSON.stringify(session(USERS + 1 + (n++ % 100), Date.now(), 3)));
    latencies.push(await post(h.service.url, h.token, body));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return latencies;
}

/** /healthz latencies (ms), one after another, until `until` resolves */
async function healthWhile(h: Harness, until: Promise<unknown>): Promise<number[]> {
  let done = false;
  void until.finally(() => (done = true));
  const latencies: number[] = [];
  while (!done) {
    const started = performance.now();
    await (await fetch(`${h.service.url}/healthz`)).arrayBuffer().catch(() => undefined);
    latencies.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return latencies;
}

interface StoreResult {
  store: string;
  loadSeconds: number;
  calls: { name: string; days: number; seconds: number; status: number }[];
  slowest: string;
  healthzMaxMs: number;
  ingestQuietP50Ms: number;
  ingestBusyP50Ms: number;
  /** a server only: ingest p50 while a statement outside the service burns a core as long */
  ingestReferenceP50Ms?: number;
}

async function runStore(name: 'embedded' | 'postgres'): Promise<StoreResult> {
  const database = name === 'postgres' ? await createTestDatabase() : undefined;
  const env: Record<string, string> = {
    ...(database ? { DATABASE_URL: database.url } : {}),
    DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'tma-lived-in-')),
    SECRET: 'bench-secret-'.padEnd(48, 'x'),
    PUBLIC_URL: 'http://127.0.0.1',
    ...UNLIMITED_SERVICE_SETTINGS,
    READ_API_RATE_LIMIT_MAX: '1000000',
    ...cpuProfileSettings(CPU_PROF),
  };
  let service = await startService(env);
  try {
    if (database) {
      // the issue's server: no autovacuum to fall back on
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const tables = await client.query<{ name: string }>(
        `SELECT relname AS name FROM pg_class WHERE relkind = 'r' AND relnamespace = current_schema()::regnamespace`,
      );
      for (const { name: table } of tables.rows)
        await client.query(`ALTER TABLE "${table}" SET (autovacuum_enabled = off)`);
      await client.end();
    }
    const { token } = await runCliJson<{ token: string }>(env, [
      ...['tokens', 'create', '--bot', '@lived_in_bot', '--domain', 'lived.example.com'],
      ...['--app-name', APP, '--owner', OWNER],
    ]);
    const { key: readKey } = await runCliJson<{ key: string }>(env, ['read-keys', 'create', '--app-name', APP]);
    const h: Harness = { service, token, readKey, cookie: '', share: '' };
    const all = [...requests(Date.now())];
    log(`${name}: ${all.length} requests, ${EVENTS} events over ${DAYS} days`);
    const started = performance.now();
    const half = Math.floor(all.length / 2);
    await load(h, 0, half, all);
    // halfway: a user erased, a retention period set, and a restart (its retention purge runs at start)
    await drainedWithin(service.url, 600_000);
    await runCliJson(env, ['users', 'erase', '--app-name', APP, '--telegram-user-id', String(100_000_000 + 7)]);
    await runCliJson(env, ['apps', 'retention', '--app-name', APP, '--days', '90']);
    await service.stop();
    service = await startService(env);
    h.service = service;
    await load(h, half, all.length, all);
    await drainedWithin(service.url, 600_000);
    const loadSeconds = (performance.now() - started) / 1000;
    log(`${name}: loaded in ${round(loadSeconds, 1)} s`);
    // the service's own maintenance has a few seconds after the last commit, as it would in life
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    h.cookie = await signIn(env, service.url);
    const shared = await fetch(`${service.url}/api/apps/${APP}/share`, {
      method: 'POST',
      headers: { cookie: h.cookie, 'content-type': 'application/json', origin: service.url },
      body: '{}',
    });
    const { url: shareUrl } = (await shared.json()) as { url: string };
    h.share = shareUrl.split('/').at(-1)!;
    const results: StoreResult['calls'] = [];
    for (const days of [90, 365]) {
      for (const call of calls(h, days)) {
        const timed = await timeCall(h, call);
        results.push({ name: call.name, days, seconds: round(timed.seconds, 3), status: timed.status });
        log(`${name}: ${call.name} ${days} d: ${round(timed.seconds, 3)} s (${timed.status})`);
      }
    }
    const slowest = results.reduce((a, b) => (b.seconds > a.seconds ? b : a));
    const slowestCall = calls(h, slowest.days).find((call) => call.name === slowest.name)!;
    // both windows last as long and poll /healthz alike, so they differ only by the read
    const quietWindow = new Promise((resolve) => setTimeout(resolve, WINDOW_MS));
    const [quiet] = await Promise.all([ingestWhile(h, quietWindow), healthWhile(h, quietWindow)]);
    // with --cpu-prof: the profile up to here ends, and the next covers the busy window alone
    if (CPU_PROF) process.kill(h.service.pid, 'SIGUSR2');
    const reading = (async () => {
      const until = performance.now() + WINDOW_MS;
      for (let n = 0; n < 3 || performance.now() < until; n++) await timeCall(h, slowestCall);
    })();
    const [busy, health] = await Promise.all([ingestWhile(h, reading), healthWhile(h, reading)]);
    if (CPU_PROF) process.kill(h.service.pid, 'SIGUSR2');
    // the reference on a server: as long a statement that only burns a core, on a connection of its own outside the
    // service; what ingest loses to it is what any service on this machine loses while PostgreSQL reads
    let reference: number[] | undefined;
    if (database) {
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      const burning = (async () => {
        const until = performance.now() + WINDOW_MS;
        while (performance.now() < until) await client.query('SELECT count(*) FROM generate_series(1, 3000000)');
      })();
      [reference] = await Promise.all([ingestWhile(h, burning), healthWhile(h, burning)]);
      await client.end();
    }
    return {
      store: name,
      loadSeconds: round(loadSeconds, 1),
      calls: results,
      slowest: `${slowest.name} ${slowest.days} d`,
      healthzMaxMs: round(Math.max(...health), 1),
      ingestQuietP50Ms: round(median(quiet), 2),
      ingestBusyP50Ms: round(median(busy), 2),
      ...(reference ? { ingestReferenceP50Ms: round(median(reference), 2) } : {}),
    };
  } finally {
    await service.stop();
    await database?.drop();
    fs.rmSync(env.DATA_DIR!, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  log(uptimeLine());
  const stores: ('embedded' | 'postgres')[] = [];
  if (ONLY !== 'postgres') stores.push('embedded');
  if (ONLY !== 'embedded' && (await available('PostgreSQL'))) stores.push('postgres');
  const results: StoreResult[] = [];
  for (const store of stores) results.push(await runStore(store));
  const targets: Target[] = [];
  for (const result of results) {
    console.log(`\n${result.store} (loaded in ${result.loadSeconds} s)`);
    const names = [...new Set(result.calls.map((call) => call.name))];
    console.log(
      formatTable(
        ['call', '90 days', '365 days'],
        names.map((callName) => [
          callName,
          ...[90, 365].map((days) => {
            const call = result.calls.find((c) => c.name === callName && c.days === days);
            return call ? `${call.seconds} s${call.status === 200 ? '' : ` (${call.status || 'timeout'})`}` : '—';
          }),
        ]),
      ),
    );
    const slowest = Math.max(...result.calls.map((call) => call.seconds));
    targets.push(
      target(`${result.store}: slowest call (${result.slowest})`, slowest, 's', '<=', 1),
      target(
        `${result.store}: calls answered 200`,
        result.calls.filter((c) => c.status !== 200).length,
        'failed',
        '<=',
        0,
      ),
      target(`${result.store}: /healthz max while the slowest runs`, result.healthzMaxMs / 1000, 's', '<=', 0.5),
      target(
        `${result.store}: ingest p50 while the slowest runs / quiet (${result.ingestBusyP50Ms} / ${result.ingestQuietP50Ms} ms)`,
        result.ingestBusyP50Ms / result.ingestQuietP50Ms,
        '×',
        '<=',
        3,
      ),
    );
    if (result.ingestReferenceP50Ms !== undefined)
      console.log(
        `${result.store}: ingest p50 while a statement outside the service burns a core, the reference: ` +
          `${result.ingestReferenceP50Ms} ms = ${round(result.ingestReferenceP50Ms / result.ingestQuietP50Ms, 2)} × quiet`,
      );
  }
  printSummary({ events: EVENTS, users: USERS, days: DAYS, results }, targets, JSON_OUT);
}

await main();

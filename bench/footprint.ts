// Footprint bench: the service started as a self-hoster starts it (the command is a parameter), measured as the whole
// process group it leaves running: idle RSS (sum of VmRSS, and of Pss, which shares pages between the group's
// processes fairly) on a fresh DATA_DIR, on the same one reopened, under 20 s of single events at max (peak and after)
// and on PostgreSQL; the time from spawn to `/healthz` "ok" on a fresh and on a reopened DATA_DIR. References in the
// same run: `node -e 0`; plain node with one PGlite thread open on the same DATA_DIR and settings (the floor of this
// design, bench/footprint-floor.mjs); a bare Fastify; a bare Fastify under tsx. On the embedded store /metrics splits
// the service's memory: the main thread's heap, PGlite's thread's heap and its WebAssembly memory.
// Idle is settled: each state waits at least --idle seconds and until the group's RSS has not fallen for 15 s (at
// most --idle + 60 s). MB = 10⁶ bytes. Prints a table and one JSON document; exits non-zero only when something
// failed to run.
//
//   node --import tsx bench/footprint.ts [--command "node --import tsx src/main.ts"] [--idle 20] [--load-seconds 20]
//     [--connections 32] [--only embedded,postgres,references] [--starts 5] [--json-out file]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { START_PARAMS } from '../src/db/embedded/durable-pglite.ts';
import { createTestDatabase } from '../test/helpers/postgres.ts';
import { childEnv, freePort, PROJECT_ROOT, runCli } from '../test/helpers/service-process.ts';
import { singleEventBodies, writeBodyFile } from './lib/bodies.ts';
import { runLoad } from './lib/loadgen.ts';
import { machineInfo, runBenchMain, UNLIMITED_SERVICE_SETTINGS } from './lib/processes.ts';
import { readMetrics } from './lib/service-metrics.ts';
import {
  figure,
  formatTable,
  median,
  parseArgs,
  printSummary,
  round,
  target,
  uptimeLine,
  type Target,
} from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const COMMAND = (args.get('command') ?? 'node --import tsx src/main.ts').split(/\s+/).filter(Boolean);
const IDLE_SEC = Number(args.get('idle') ?? 20);
const LOAD_SEC = Number(args.get('load-seconds') ?? 20);
/** reopened starts taken (and the floor's): a start moves with the machine, so the figure is their median */
const STARTS = Number(args.get('starts') ?? 5);
const CONNECTIONS = Number(args.get('connections') ?? 32);
const ONLY = new Set((args.get('only') ?? 'embedded,postgres,references').split(','));
const JSON_OUT = args.get('json-out');

/**
 * A reference script run as the service's command runs: the same `env` settings and node options (V8's heap sizes
 * and growth change an idle process's RSS by tens of MB), without a TypeScript loader when the script is JavaScript.
 */
function referenceCommand(script: string): string[] {
  const nodeAt = COMMAND.findIndex((part) => part === 'node' || part.endsWith('/node'));
  const options: string[] = [];
  for (let at = nodeAt + 1; at < COMMAND.length - 1 && COMMAND[at]!.startsWith('--'); at++) {
    if (COMMAND[at] === '--import' || COMMAND[at] === '--require') at++;
    else options.push(COMMAND[at]!);
  }
  return [...COMMAND.slice(0, nodeAt), 'node', ...options, script];
}

/**
 * What any service on this stack loads besides its own code, for the stack's floor: the HTTP framework, Prisma's
 * client (the generated one, with its runtime), the durable log's store, the logger and the metrics client.
 */
const STACK_MODULES = ['fastify', './src/db/prisma-client/index.js', 'lmdb', 'pino', 'prom-client'];

const APP = 'footprint_app';
const DOMAIN = 'footprint.example.com';
const MB = 1e6;
/** RSS has settled once it has not fallen by more than this over SETTLE_WINDOW_SEC */
const SETTLE_BYTES = 2 ** 20;
const SETTLE_WINDOW_SEC = 15;
const READY_TIMEOUT_MS = 300_000;

const log = (message: string) =>
  console.error(`[bench footprint ${new Date().toISOString().slice(11, 19)}] ${message}`);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-footprint-'));
const cleanups: (() => Promise<unknown>)[] = [];

/** the processes of a process group, read from /proc: pid, command line, VmRSS, its anonymous part and Pss in bytes */
interface Member {
  pid: number;
  command: string;
  rss: number;
  /** RssAnon: the process's own memory; the rest of RSS is mapped files (the log's, the store's), page cache */
  anon: number;
  pss: number;
}

function groupMembers(pgid: number): Member[] {
  const members: Member[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // fields after the command name (which may hold spaces): state ppid pgrp
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
      const status = fs.readFileSync(`/proc/${entry}/status`, 'utf8');
      const kB = (text: string, field: string) =>
        Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) * 1024;
      members.push({
        pid: Number(entry),
        command: fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim().slice(0, 100),
        rss: kB(status, 'VmRSS'),
        anon: kB(status, 'RssAnon'),
        pss: kB(fs.readFileSync(`/proc/${entry}/smaps_rollup`, 'utf8'), 'Pss'),
      });
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

const sumOf = (members: Member[], field: 'rss' | 'anon') => members.reduce((sum, member) => sum + member[field], 0);
const groupRss = (pgid: number) => sumOf(groupMembers(pgid), 'rss');

/** a command run as the leader of a process group of its own, as a shell or a supervisor starts a service */
interface Group {
  pgid: number;
  url: string;
  output(): string;
  running(): boolean;
  /** SIGTERM to the group, SIGKILL after 20 s; resolves with the leader's exit code */
  stop(): Promise<number | null>;
}

/** spawns command and waits until GET /healthz answers 200 with status "ok"; resolves with the group and the time */
async function startGroup(command: string[], env: Record<string, string>): Promise<{ group: Group; readyMs: number }> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(command[0]!, command.slice(1), {
    cwd: PROJECT_ROOT,
    env: childEnv({ HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env, PORT: String(port) }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let text = '';
  const append = (chunk: Buffer) => (text = (text + chunk.toString('utf8')).slice(-20_000));
  child.stdout.on('data', append);
  child.stderr.on('data', append);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const running = () => child.exitCode === null && child.signalCode === null;
  const pgid = child.pid!;
  const group: Group = {
    pgid,
    url: `http://127.0.0.1:${port}`,
    output: () => text,
    running,
    async stop() {
      if (!running()) return exited;
      process.kill(-pgid, 'SIGTERM');
      const timer = setTimeout(() => process.kill(-pgid, 'SIGKILL'), 20_000);
      const code = await exited;
      clearTimeout(timer);
      // whatever the leader left behind in its group
      for (const member of groupMembers(pgid)) process.kill(member.pid, 'SIGKILL');
      return code;
    },
  };
  cleanups.push(() => group.stop());
  for (const deadline = Date.now() + READY_TIMEOUT_MS; Date.now() < deadline; await sleep(50)) {
    if (!running()) throw new Error(`${command.join(' ')} exited before it was ready:\n${text}`);
    const status = await fetch(`${group.url}/healthz`, { signal: AbortSignal.timeout(1_000) })
      .then(async (response) => (response.ok ? ((await response.json()) as { status?: string }).status : undefined))
      .catch(() => undefined);
    if (status === 'ok') return { group, readyMs: performance.now() - started };
  }
  throw new Error(`${command.join(' ')} did not answer /healthz ok within ${READY_TIMEOUT_MS / 1000} s:\n${text}`);
}

async function stopGroup(group: Group, name: string): Promise<void> {
  const code = await group.stop();
  if (code !== 0) throw new Error(`${name} did not stop cleanly (${code}):\n${group.output()}`);
}

interface Idle {
  /** sum of VmRSS over the group */
  rss: number;
  /** sum of Pss over the group */
  pss: number;
  processes: { command: string; rssMB: number }[];
  settledAfterSec: number;
  /** from the service's /metrics, when it has them */
  parts?: Record<string, number>;
}

/** waits until the group has been idle IDLE_SEC and its RSS stopped falling, then reads it */
async function idle(group: Group, name: string): Promise<Idle> {
  const samples: number[] = [];
  for (let second = 1; ; second++) {
    await sleep(1000);
    if (!group.running()) throw new Error(`${name} stopped while idle:\n${group.output()}`);
    samples.push(groupRss(group.pgid));
    const window = samples.slice(-SETTLE_WINDOW_SEC - 1);
    const settled =
      second >= IDLE_SEC && window.length > SETTLE_WINDOW_SEC && window[0]! - Math.min(...window) <= SETTLE_BYTES;
    if (settled || second >= IDLE_SEC + 60) {
      const members = groupMembers(group.pgid);
      const result: Idle = {
        rss: members.reduce((sum, member) => sum + member.rss, 0),
        pss: members.reduce((sum, member) => sum + member.pss, 0),
        processes: members.map((member) => ({ command: member.command, rssMB: round(member.rss / MB, 1) })),
        settledAfterSec: second,
        parts: await memoryParts(group.url),
      };
      log(`${name}: ${round(result.rss / MB, 0)} MB RSS, ${round(result.pss / MB, 0)} MB PSS after ${second} s idle`);
      return result;
    }
  }
}

/** the service's own split of its memory (MB), from /metrics; undefined for a reference without them */
async function memoryParts(url: string): Promise<Record<string, number> | undefined> {
  const metrics = await readMetrics(url).catch(() => undefined);
  if (!metrics?.has('nodejs_heap_size_total_bytes')) return undefined;
  const mb = (name: string) => round((metrics.get(name) ?? 0) / MB, 1);
  return {
    mainHeapTotal: mb('nodejs_heap_size_total_bytes'),
    mainHeapUsed: mb('nodejs_heap_size_used_bytes'),
    mainExternal: mb('nodejs_external_memory_bytes'),
    threadHeapTotal: mb('tma_embedded_thread_heap_total_bytes'),
    threadHeapUsed: mb('tma_embedded_thread_heap_used_bytes'),
    threadExternal: mb('tma_embedded_thread_external_bytes'),
    wasmMemory: mb('tma_embedded_wasm_memory_bytes'),
  };
}

/** the time `node -e 0` takes from spawn to exit: what any Node program pays before its first line */
async function nodeStartMs(): Promise<number> {
  const started = performance.now();
  await new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', resolve);
  });
  return performance.now() - started;
}

const serviceEnv = (dataDir: string, extra: Record<string, string> = {}) => ({
  DATA_DIR: dataDir,
  SECRET: 'footprint-bench-secret-'.padEnd(48, 'x'),
  ...UNLIMITED_SERVICE_SETTINGS,
  ...extra,
});

async function main(): Promise<void> {
  const started = new Date();
  log(`${uptimeLine()}; command: ${COMMAND.join(' ')}; idle at least ${IDLE_SEC} s per state`);
  const idles: Record<string, Idle> = {};
  const readyMs: Record<string, number> = {};
  /** every start taken where the figure is their median */
  const startRanges: Record<string, number[]> = {};
  let load: { rps: number; peak: number; peakAnon: number; tool: string; requests: number } | undefined;
  const dataDir = path.join(work, 'data');

  if (ONLY.has('embedded')) {
    let { group, readyMs: ms } = await startGroup(COMMAND, serviceEnv(dataDir));
    readyMs.fresh = ms;
    log(`fresh DATA_DIR: /healthz ok after ${round(ms / 1000, 2)} s`);
    idles.fresh = await idle(group, 'embedded, fresh DATA_DIR');
    await stopGroup(group, 'the service');

    const reopenedMs: number[] = [];
    for (let start = 1; ; start++) {
      ({ group, readyMs: ms } = await startGroup(COMMAND, serviceEnv(dataDir)));
      reopenedMs.push(ms);
      log(`reopened DATA_DIR (${start} of ${STARTS}): /healthz ok after ${round(ms / 1000, 2)} s`);
      if (start === STARTS) break;
      await stopGroup(group, 'the service');
    }
    readyMs.reopened = median(reopenedMs);
    startRanges.reopened = reopenedMs;
    idles.reopened = await idle(group, 'embedded, reopened DATA_DIR');

    const env = serviceEnv(dataDir);
    // a CLI command waits for a loaded machine longer than the tests' helper does
    const created = await runCli(
      env,
      ['tokens', 'create', '--bot', '@footprint_app_bot', '--domain', DOMAIN, '--app-name', APP, '--json'],
      180_000,
    );
    if (created.exitCode !== 0) throw new Error(`tokens create failed: ${created.stdout}${created.stderr}`);
    const { token } = JSON.parse(created.stdout) as { token: string };
    const bodyFile = writeBodyFile(
      path.join(work, 'single.bin'),
      singleEventBodies({ appName: APP, tag: 'footprint', count: 400_000 }),
    ).file;
    let peak = 0;
    let peakAnon = 0;
    // one read of /proc per sample for both figures
    const sample = () => {
      const members = groupMembers(group.pgid);
      peak = Math.max(peak, sumOf(members, 'rss'));
      peakAnon = Math.max(peakAnon, sumOf(members, 'anon'));
    };
    sample();
    const sampler = setInterval(sample, 100);
    const result = await runLoad({
      url: `${group.url}/events`,
      headers: { 'content-type': 'application/json', origin: `https://${DOMAIN}`, 'tga-auth-token': token },
      bodyFile,
      connections: CONNECTIONS,
      durationSec: LOAD_SEC,
    });
    clearInterval(sampler);
    if (result.errorStatus > 0 || result.transportErrors > 0) {
      throw new Error(`${result.errorStatus} answers ≥ 400 and ${result.transportErrors} transport errors under load`);
    }
    load = { rps: round(result.rps, 0), peak, peakAnon, tool: result.tool, requests: result.requests };
    log(`load: ${load.rps} req/s (${result.tool}), peak group RSS ${round(peak / MB, 0)} MB`);
    idles.afterLoad = await idle(group, 'embedded, after the load');
    await stopGroup(group, 'the service');
  }

  if (ONLY.has('postgres')) {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const { group } = await startGroup(
      COMMAND,
      serviceEnv(path.join(work, 'data-postgres'), { DATABASE_URL: database.url }),
    );
    idles.postgres = await idle(group, 'PostgreSQL');
    await stopGroup(group, 'the service on PostgreSQL');
  }

  if (ONLY.has('references')) {
    const nodeMs = [await nodeStartMs(), await nodeStartMs(), await nodeStartMs()].sort((a, b) => a - b)[1]!;
    readyMs.nodeStart = nodeMs;
    if (!fs.existsSync(path.join(dataDir, 'pgdata', 'PG_VERSION'))) {
      // without the service's runs above, the floor opens a cluster the service makes (and stops) first
      const { group } = await startGroup(COMMAND, serviceEnv(dataDir));
      await stopGroup(group, 'the service');
    }
    const floorEnv = { DATA_DIR: dataDir, PGLITE_START_PARAMS: JSON.stringify(START_PARAMS) };
    const floorMs: number[] = [];
    for (let start = 1; start < STARTS; start++) {
      const again = await startGroup(referenceCommand('bench/footprint-floor.mjs'), floorEnv);
      floorMs.push(again.readyMs);
      await stopGroup(again.group, 'the floor reference');
    }
    const floor = await startGroup(referenceCommand('bench/footprint-floor.mjs'), floorEnv);
    floorMs.push(floor.readyMs);
    readyMs.floor = median(floorMs);
    startRanges.floor = floorMs;
    idles.floor = await idle(floor.group, 'reference: node + one PGlite thread (reopened)');
    await stopGroup(floor.group, 'the floor reference');
    const stack = await startGroup(referenceCommand('bench/footprint-floor.mjs'), {
      ...floorEnv,
      HTTP: 'fastify',
      LOAD_MODULES: STACK_MODULES.join(','),
    });
    idles.stack = await idle(stack.group, "reference: the stack's floor (reopened)");
    await stopGroup(stack.group, "the stack's floor reference");
    const fastify = await startGroup(referenceCommand('bench/footprint-floor.mjs'), { HTTP: 'fastify' });
    idles.fastify = await idle(fastify.group, 'reference: bare Fastify');
    await stopGroup(fastify.group, 'the Fastify reference');
    const fastifyTsx = await startGroup(['node', '--import', 'tsx', 'bench/baseline-server.ts'], {});
    idles.fastifyTsx = await idle(fastifyTsx.group, 'reference: bare Fastify under tsx');
    await stopGroup(fastifyTsx.group, 'the Fastify reference under tsx');
  }

  const mb = (bytes: number | undefined) => (bytes === undefined ? null : round(bytes / MB, 0));
  const s = (ms: number | undefined) => (ms === undefined ? null : round(ms / 1000, 2));
  const floorNote = idles.floor
    ? `reference: node + one PGlite thread idles at ${mb(idles.floor.rss)} MB, with Fastify and the stack's libraries at ${mb(idles.stack?.rss)} MB, bare Fastify at ${mb(idles.fastify?.rss)} MB`
    : undefined;
  const range = (name: string) =>
    startRanges[name]
      ? `, median of ${startRanges[name].length}: ${startRanges[name].map((ms) => s(ms)).join(', ')} s`
      : '';
  const startNote = (ms: number | undefined, name: string) =>
    ms !== undefined && readyMs.floor !== undefined
      ? `${round(ms / readyMs.floor, 2)} × node + PGlite open (${s(readyMs.floor)} s${range('floor')})${range(name)}; node -e 0: ${s(readyMs.nodeStart)} s`
      : undefined;
  const targets: Target[] = [
    target('idle RSS, embedded, fresh DATA_DIR', mb(idles.fresh?.rss), 'MB', '<=', 150, floorNote),
    target('idle RSS, embedded, reopened DATA_DIR', mb(idles.reopened?.rss), 'MB', '<=', 150, floorNote),
    target(
      'idle RSS, PostgreSQL',
      mb(idles.postgres?.rss),
      'MB',
      '<=',
      100,
      idles.fastify && `reference: bare Fastify idles at ${mb(idles.fastify.rss)} MB`,
    ),
    target(
      `RSS at max single-event load, embedded (${load?.rps ?? '—'} req/s)`,
      mb(load?.peak),
      'MB',
      '<=',
      300,
      `of it anonymous at most ${mb(load?.peakAnon)} MB; the rest is the log's and the store's files, mapped`,
    ),
    figure('idle RSS after the load, embedded', mb(idles.afterLoad?.rss), 'MB'),
    target('fresh DATA_DIR → /healthz ok', s(readyMs.fresh), 's', '<=', 3, startNote(readyMs.fresh, 'fresh')),
    target(
      'reopened DATA_DIR → /healthz ok',
      s(readyMs.reopened),
      's',
      '<=',
      1.5,
      startNote(readyMs.reopened, 'reopened'),
    ),
  ];
  const summary = {
    bench: 'footprint',
    date: started.toISOString(),
    command: COMMAND.join(' '),
    machine: machineInfo(),
    settings: { idleSec: IDLE_SEC, settleWindowSec: SETTLE_WINDOW_SEC, loadSec: LOAD_SEC, connections: CONNECTIONS },
    idleMB: Object.fromEntries(
      Object.entries(idles).map(([name, state]) => [
        name,
        {
          rss: round(state.rss / MB, 1),
          pss: round(state.pss / MB, 1),
          settledAfterSec: state.settledAfterSec,
          processes: state.processes,
          parts: state.parts,
        },
      ]),
    ),
    readySec: Object.fromEntries(Object.entries(readyMs).map(([name, ms]) => [name, s(ms)])),
    startsSec: Object.fromEntries(Object.entries(startRanges).map(([name, all]) => [name, all.map((ms) => s(ms))])),
    load: load && { ...load, peakMB: mb(load.peak), peakAnonMB: mb(load.peakAnon) },
    loadavgAtEnd: os.loadavg().map((value) => round(value)),
    targets,
  };
  const names: Record<string, string> = {
    fresh: 'embedded, fresh DATA_DIR',
    reopened: 'embedded, reopened DATA_DIR',
    afterLoad: 'embedded, after the load',
    postgres: 'PostgreSQL',
    floor: 'reference: node + one PGlite thread',
    stack: "reference: the stack's floor (node + one PGlite thread + Fastify answering + the stack's libraries loaded)",
    fastify: 'reference: bare Fastify',
    fastifyTsx: 'reference: bare Fastify under tsx',
  };
  console.log(`\nFootprint bench — \`${COMMAND.join(' ')}\`, whole process group, idle at least ${IDLE_SEC} s\n`);
  console.log(
    formatTable(
      ['state', 'RSS MB', 'PSS MB', 'processes', 'main heap', 'thread heap', 'wasm memory'],
      Object.entries(idles).map(([name, state]) => [
        names[name] ?? name,
        mb(state.rss)!,
        mb(state.pss)!,
        state.processes.length,
        state.parts ? state.parts.mainHeapTotal : '',
        state.parts?.threadHeapTotal ? state.parts.threadHeapTotal : '',
        state.parts?.wasmMemory ? state.parts.wasmMemory : '',
      ]),
    ),
  );
  printSummary(summary, targets, JSON_OUT);
}

await runBenchMain(main, cleanups, work);

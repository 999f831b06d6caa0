// How the service runs when a self-hoster starts it, built (`npm start`: node dist/server/main.js) beside the sources
// through tsx (`npm run dev`), on one embedded DATA_DIR, in the same run: the time from the start to /healthz "ok"
// (fresh DATA_DIR once, then reopened), the processes of the start's process group and their resident memory once
// idle, and a CLI command the running service answers (`apps show --json`) beside `node -e 0` and `--help`.
//   node --import tsx bench/run-built.ts [--runs 10] [--idle 10]
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { buildService } from '../src/build/build-service.ts';
import { SERVER_BUILD_DIR } from '../src/platform/project-paths.ts';
import { processGroup } from '../test/helpers/process-group.ts';
import { childEnv, freePort, PROJECT_ROOT } from '../test/helpers/service-process.ts';

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '10' }, idle: { type: 'string', default: '10' } },
});
const RUNS = Number(values.runs);
const IDLE_SECONDS = Number(values.idle);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-run-built-'));
const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
const MB = (bytes: number) => (bytes / 1e6).toFixed(0);

if (!fs.existsSync(path.join(SERVER_BUILD_DIR, 'main.js'))) await buildService();

interface Started {
  child: ChildProcess;
  seconds: number;
}

/** `npm <script>` in a process group of its own; resolves once /healthz answers 200 */
async function startService(script: 'start' | 'dev'): Promise<Started> {
  const began = performance.now();
  const child = spawn('npm', [script === 'start' ? 'start' : 'run', ...(script === 'dev' ? ['dev'] : [])], {
    cwd: PROJECT_ROOT,
    env: childEnv(env),
    stdio: 'ignore',
    detached: true,
  });
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`npm ${script} exited (${child.exitCode ?? child.signalCode})`);
    const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).catch(() => null);
    if (response?.status === 200) return { child, seconds: (performance.now() - began) / 1000 };
    await response?.arrayBuffer();
    await sleep(50);
  }
}

async function stopService({ child }: Started): Promise<void> {
  process.kill(-child.pid!, 'SIGTERM'); // the group, as a terminal's Ctrl-C or a supervisor's stop does
  while (processGroup(child.pid!).length > 0) await sleep(100);
}

/** wall seconds of one command, run to its end; its exit code must be 0 */
async function timed(command: string, args: string[]): Promise<number> {
  const began = performance.now();
  const code = await new Promise<number | null>((resolve) =>
    spawn(command, args, { cwd: PROJECT_ROOT, env: childEnv(env), stdio: 'ignore' }).once('exit', resolve),
  );
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${code}`);
  return (performance.now() - began) / 1000;
}

const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;

/** each command once per round, in turn, RUNS rounds: median, min and max wall seconds of each */
async function timeCommands(commands: Record<string, [string, string[]]>): Promise<Record<string, number[]>> {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
  for (let round = 0; round < RUNS; round++)
    for (const [name, [command, args]] of Object.entries(commands)) times[name]!.push(await timed(command, args));
  return times;
}

function group(started: Started) {
  const members = processGroup(started.child.pid!);
  return { members, rss: members.reduce((sum, member) => sum + member.rssBytes, 0) };
}

const APP = ['apps', 'show', '--app-name', 'bench_app', '--json'];

console.log(
  `machine: ${os.cpus().length} cores, load ${os
    .loadavg()
    .map((load) => load.toFixed(1))
    .join(' ')}`,
);
const fresh = await startService('start');
console.log(`npm start, fresh DATA_DIR → /healthz 200: ${fresh.seconds.toFixed(2)} s`);
await timed('node', [
  'dist/server/cli.js',
  'tokens',
  'create',
  '--bot',
  '@bench_bot',
  '--domain',
  'b.example.com',
  '--app-name',
  'bench_app',
]);
await stopService(fresh);

const results: Record<string, { start: number; idle: ReturnType<typeof group>; cli: Record<string, number[]> }> = {};
for (const script of ['start', 'dev'] as const) {
  const started = await startService(script);
  console.log(
    `npm ${script}: reopened, ready after ${started.seconds.toFixed(2)} s; idle ${IDLE_SECONDS} s, then the CLI`,
  );
  await sleep(IDLE_SECONDS * 1000);
  const idle = group(started);
  const cli = await timeCommands({
    'node -e 0': ['node', ['-e', '0']],
    'cli --help (built)': ['node', ['dist/server/cli.js', '--help']],
    'apps show --json (built)': ['node', ['dist/server/cli.js', ...APP]],
    'npm run -s cli -- apps show --json': ['npm', ['run', '-s', 'cli', '--', ...APP]],
    'apps show --json (tsx src)': ['node', ['--import', 'tsx', 'src/cli/main.ts', ...APP]],
  });
  results[script] = { start: started.seconds, idle, cli };
  await stopService(started);
}

console.log(
  `load after: ${os
    .loadavg()
    .map((load) => load.toFixed(1))
    .join(' ')}\n`,
);
for (const [script, { start, idle, cli }] of Object.entries(results)) {
  console.log(
    `npm ${script === 'start' ? 'start' : 'run dev'}: reopened DATA_DIR → /healthz 200 ${start.toFixed(2)} s`,
  );
  console.log(`  process group after ${IDLE_SECONDS} s idle: ${idle.members.length} processes, ${MB(idle.rss)} MB RSS`);
  for (const member of idle.members)
    console.log(`    ${MB(member.rssBytes).padStart(4)} MB  ${member.command.slice(0, 100)}`);
  const reference = median(cli['node -e 0']!);
  console.log(`  CLI with the service running, ${RUNS} runs each (median / min / max, × node -e 0):`);
  for (const [name, times] of Object.entries(cli)) {
    const line = `${median(times).toFixed(3)} / ${Math.min(...times).toFixed(3)} / ${Math.max(...times).toFixed(3)} s`;
    console.log(`    ${name.padEnd(36)} ${line}  ${(median(times) / reference).toFixed(1)} ×`);
  }
}
fs.rmSync(dataDir, { recursive: true, force: true });

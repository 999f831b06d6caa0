// /healthz while a fresh DATA_DIR starts: a probe every 10 ms from the spawn of the built service (`npm start`'s
// arguments) until "ok", each probe's answer time; beside a bare node HTTP server started and probed the same way in
// the same run (what this machine gives any process). The guide promises "starting" within 0.1 s.
//
//   node --import tsx bench/healthz-while-starting.ts [--starts 3] [--json-out file]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { childEnv, freePort, PROJECT_ROOT } from '../test/helpers/service-process.ts';
import { figure, formatTable, median, parseArgs, printSummary, round, target, uptimeLine } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const STARTS = Number(args.get('starts') ?? 3);
const PROBE_EVERY_MS = 10;
const START_SCRIPT: string = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).scripts.start;
const SERVICE_ARGS = START_SCRIPT.split(' exec node ')[1]!.split(' ');
const BARE_SERVER = `require('node:http').createServer((q, s) => { s.writeHead(503); s.end('{"status":"starting"}'); }).listen(Number(process.argv[1]), '127.0.0.1')`;

interface Probe {
  /** ms from the spawn to the probe's start */
  sentAt: number;
  ms: number;
  status: number | 'refused';
}

function probe(port: number): Promise<{ ms: number; status: number | 'refused' }> {
  const sent = performance.now();
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - sent, status: res.statusCode ?? 0 }));
    });
    request.on('error', () => resolve({ ms: performance.now() - sent, status: 'refused' }));
  });
}

/** spawns command, probes it every 10 ms until a 200 (or, for the bare server, untilAnswers answers), kills it */
async function probeStart(command: string[], env: NodeJS.ProcessEnv, port: number, untilAnswers?: number) {
  const spawned = performance.now();
  const child = spawn(process.execPath, command, { cwd: PROJECT_ROOT, env, stdio: 'ignore' });
  const probes: Probe[] = [];
  let done = false;
  const pending = new Set<Promise<void>>();
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => !done && reject(new Error(`${command.join(' ')} exited with ${code}`)));
    const timer = setInterval(() => {
      const sentAt = performance.now() - spawned;
      const answered = probe(port).then(({ ms, status }) => {
        probes.push({ sentAt, ms, status });
        const answers = probes.filter((p) => p.status !== 'refused').length;
        if (status === 200 || (untilAnswers !== undefined && answers >= untilAnswers)) {
          done = true;
          clearInterval(timer);
          resolve();
        }
      });
      pending.add(answered);
      void answered.finally(() => pending.delete(answered));
    }, PROBE_EVERY_MS);
  });
  await Promise.all(pending);
  child.kill('SIGKILL');
  const starting = probes.filter((p) => p.status === 503);
  const ready = probes.find((p) => p.status === 200);
  return {
    firstStartingMs: Math.min(...starting.map((p) => p.sentAt + p.ms)),
    slowestStartingMs: Math.max(...starting.map((p) => p.ms)),
    /** when the slowest "starting" probe was sent, ms from the spawn */
    slowestSentAtMs: starting.reduce((a, b) => (b.ms > a.ms ? b : a)).sentAt,
    medianStartingMs: median(starting.map((p) => p.ms)),
    startingAnswers: starting.length,
    readyMs: ready ? ready.sentAt + ready.ms : Number.NaN,
  };
}

async function main(): Promise<void> {
  console.error(`[bench healthz-while-starting] ${uptimeLine()}`);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-healthz-starting-'));
  const rows: (string | number)[][] = [];
  const service: Awaited<ReturnType<typeof probeStart>>[] = [];
  const bare: Awaited<ReturnType<typeof probeStart>>[] = [];
  try {
    for (let i = 0; i < STARTS; i++) {
      const port = await freePort();
      const env = childEnv({
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        DATA_DIR: path.join(work, `data-${i}`),
      });
      service.push(await probeStart(SERVICE_ARGS, env, port));
      const barePort = await freePort();
      // as many answers as the service gave "starting", so both are probed about as long
      const answers = service.at(-1)!.startingAnswers;
      bare.push(await probeStart(['-e', BARE_SERVER, String(barePort)], childEnv({}), barePort, answers));
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  for (const [name, runs] of [
    ['service, fresh DATA_DIR', service],
    ['bare node HTTP server', bare],
  ] as const) {
    for (const run of runs) {
      rows.push([
        name,
        round(run.firstStartingMs, 0),
        run.startingAnswers,
        round(run.medianStartingMs, 1),
        round(run.slowestStartingMs, 1),
        round(run.slowestSentAtMs, 0),
        Number.isNaN(run.readyMs) ? '—' : round(run.readyMs / 1000, 2),
      ]);
    }
  }
  console.log(`\n/healthz while starting: a probe every ${PROBE_EVERY_MS} ms from the spawn (${STARTS} starts)\n`);
  console.log(
    formatTable(
      ['process', 'first "starting" ms', 'answers', 'median ms', 'slowest ms', 'slowest sent at ms', '"ok" s'],
      rows,
    ),
  );
  const slowest = Math.max(...service.map((run) => run.slowestStartingMs));
  const bareSlowest = Math.max(...bare.map((run) => run.slowestStartingMs));
  printSummary(
    { service, bare },
    [
      target('slowest "starting" answer of the service', slowest, 'ms', '<=', 100),
      figure('slowest answer of a bare node server, same run', bareSlowest, 'ms'),
      figure('fresh DATA_DIR → "ok" (median)', median(service.map((run) => run.readyMs)) / 1000, 's'),
    ],
    args.get('json-out'),
  );
}

await main();

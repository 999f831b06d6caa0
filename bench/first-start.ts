// First-start bench: what making a new embedded cluster costs, by initdb in WebAssembly (the child process the
// service falls back to, under /usr/bin/time: wall, CPU, peak RSS) and by copying the prebuilt cluster (in this
// process: wall and CPU), beside `node -e 0` in the same run. Needs the template (`npm run build:cluster`).
//
//   node --import tsx bench/first-start.ts [--copies 3] [--json-out file]
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLUSTER_TEMPLATE_DIR } from '../src/db/embedded/cluster-template.ts';
import { createCluster } from '../src/db/embedded/pglite-cluster.ts';
import { PROJECT_ROOT } from '../test/helpers/service-process.ts';
import { machineInfo, runBenchMain } from './lib/processes.ts';
import { formatTable, median, parseArgs, printSummary, round, uptimeLine } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const COPIES = Number(args.get('copies') ?? 3);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-first-start-'));

/** runs a command to its end; resolves with its wall seconds and what /usr/bin/time -f printed last on stderr */
function run(command: string, commandArgs: string[]): Promise<{ seconds: number; stderr: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { cwd: PROJECT_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve({ seconds: (performance.now() - started) / 1000, stderr })
        : reject(new Error(`${command} exited with ${code}: ${stderr}`)),
    );
  });
}

async function main(): Promise<void> {
  console.error(`[bench first-start] ${uptimeLine()}`);
  if (!fs.existsSync(path.join(CLUSTER_TEMPLATE_DIR, 'manifest.json'))) {
    throw new Error(`no template in ${CLUSTER_TEMPLATE_DIR}: run npm run build:cluster first`);
  }
  const nodeSeconds: number[] = [];
  for (let i = 0; i < 3; i++) nodeSeconds.push((await run(process.execPath, ['-e', '0'])).seconds);

  const copies: { seconds: number; cpuSeconds: number }[] = [];
  for (let i = 0; i < COPIES; i++) {
    const started = performance.now();
    const cpu = process.cpuUsage();
    // the service makes DATA_DIR before its cluster
    fs.mkdirSync(path.join(work, `copy-${i}`));
    const origin = await createCluster(path.join(work, `copy-${i}`, 'pgdata'));
    if (origin !== 'template') throw new Error(`the template was not used (${origin})`);
    const used = process.cpuUsage(cpu);
    copies.push({ seconds: (performance.now() - started) / 1000, cpuSeconds: (used.user + used.system) / 1e6 });
  }

  // what createCluster runs when there is no template
  fs.mkdirSync(path.join(work, 'initdb'));
  const { seconds, stderr } = await run('/usr/bin/time', [
    '-f',
    '%U %S %M',
    process.execPath,
    '--import',
    'tsx',
    'src/db/embedded/pglite-cluster.ts',
    path.join(work, 'initdb', 'pgdata'),
  ]);
  const [user, system, maxKiB] = stderr.trim().split('\n').at(-1)!.split(' ').map(Number) as [number, number, number];
  const initdb = { seconds, cpuSeconds: user + system, peakRssMB: round((maxKiB * 1024) / 1e6, 0) };

  const copy = { seconds: median(copies.map((c) => c.seconds)), cpuSeconds: median(copies.map((c) => c.cpuSeconds)) };
  const node = median(nodeSeconds);
  console.log(`\nFirst start — making a new embedded cluster (medians; ${COPIES} copies)\n`);
  console.log(
    formatTable(
      ['how', 'wall s', 'CPU s', 'peak RSS MB', '× node -e 0 (wall)'],
      [
        [
          'initdb in WebAssembly (child process)',
          round(initdb.seconds),
          round(initdb.cpuSeconds),
          initdb.peakRssMB,
          round(initdb.seconds / node, 1),
        ],
        [
          'copy of the prebuilt cluster',
          round(copy.seconds),
          round(copy.cpuSeconds),
          '',
          round(copy.seconds / node, 1),
        ],
        ['reference: node -e 0', round(node), '', '', 1],
      ],
    ),
  );
  printSummary(
    { bench: 'first-start', date: new Date().toISOString(), machine: machineInfo(), initdb, copy, nodeSeconds: node },
    [],
    args.get('json-out'),
  );
}

await runBenchMain(main, [], work);

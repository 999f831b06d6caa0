// `npm run bench`: the ingest, token-flood, rollup, memory, footprint and SDK size benches in turn (each in its own
// process), then one table of every target with PASS/MISS and one JSON document with all figures.
// Exits non-zero only when a bench could not run, never for a missed target.
//
//   node --import tsx bench/run.ts [--full] [--only ingest,flood,rollups,memory,footprint,sdk] [--duration 10] [--json-out file]
//     --full      also loads 10M events in the rollup bench (several minutes; 1M otherwise)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PROJECT_ROOT } from '../test/helpers/service-process.ts';
import { machineInfo } from './lib/processes.ts';
import { parseArgs, round, target, targetTable, uptimeLine, type Target } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const only = new Set((args.get('only') ?? 'ingest,flood,rollups,memory,footprint,sdk').split(','));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-run-'));

/** runs a bench script, its output passed through; resolves with its exit code and stdout */
function runScript(script: string, scriptArgs: string[]): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...scriptArgs], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      process.stdout.write(chunk);
    });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout }));
  });
}

const readJson = (file: string) =>
  fs.existsSync(file)
    ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { targets: Target[] } & Record<string, unknown>)
    : undefined;

const started = new Date();
const loadStart = os.loadavg().map((v) => round(v));
console.error(`[bench] ${uptimeLine()}`);
const failures: string[] = [];
const summary: Record<string, unknown> = { bench: 'all', date: started.toISOString() };
const targets: Target[] = [];

/** runs a bench that writes its summary (with targets) to --json-out, and collects both */
async function runJsonBench(
  name: 'ingest' | 'flood' | 'rollups' | 'memory' | 'footprint',
  script: string,
  scriptArgs: string[],
): Promise<void> {
  const out = path.join(work, `${name}.json`);
  const { code } = await runScript(script, [...scriptArgs, '--json-out', out]);
  const result = readJson(out);
  if (code !== 0 || !result) failures.push(`${script} exited with ${code}`);
  if (result) {
    summary[name] = result;
    targets.push(...result.targets);
  }
}

if (only.has('ingest'))
  await runJsonBench('ingest', 'bench/ingest.ts', args.has('duration') ? ['--duration', args.get('duration')!] : []);
if (only.has('flood'))
  await runJsonBench('flood', 'bench/flood.ts', args.has('duration') ? ['--duration', args.get('duration')!] : []);
if (only.has('rollups'))
  await runJsonBench('rollups', 'bench/rollups.ts', ['--sizes', args.has('full') ? '1m,10m' : '1m']);
if (only.has('memory')) await runJsonBench('memory', 'bench/memory.ts', []);
if (only.has('footprint')) await runJsonBench('footprint', 'bench/footprint.ts', []);

if (only.has('sdk')) {
  if (!fs.existsSync(path.join(PROJECT_ROOT, 'bench/sdk-size.ts'))) {
    failures.push('bench/sdk-size.ts is missing');
  } else {
    // exits 1 when over its budget: a missed target, not a failure, as long as it printed its figures
    const { code, stdout } = await runScript('bench/sdk-size.ts', []);
    const line = stdout.split('\n').find((entry) => entry.startsWith('{'));
    if (!line) failures.push(`bench/sdk-size.ts exited with ${code} without figures`);
    else {
      const sdk = JSON.parse(line) as { gzipBytes: number; gzipBudgetBytes: number };
      summary.sdk = sdk;
      targets.push(target('SDK script gzip size', sdk.gzipBytes, 'bytes', '<=', sdk.gzipBudgetBytes));
    }
  }
}

summary.machine = { ...machineInfo(), loadavgAtStart: loadStart, loadavgAtEnd: os.loadavg().map((v) => round(v)) };
summary.targets = targets;
summary.failures = failures;
console.log(
  `\n=== all targets (${started.toISOString().slice(0, 16)}Z; load average at start ${loadStart.join(' ')}, at end ${os
    .loadavg()
    .map((v) => round(v))
    .join(' ')}) ===\n`,
);
console.log(targetTable(targets));
for (const failure of failures) console.log(`FAILED TO RUN: ${failure}`);
console.log('\n' + JSON.stringify(summary));
if (args.has('json-out')) fs.writeFileSync(args.get('json-out')!, JSON.stringify(summary, null, 2) + '\n');
fs.rmSync(work, { recursive: true, force: true });
process.exit(failures.length > 0 ? 1 : 0);

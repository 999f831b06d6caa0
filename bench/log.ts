// Durable-log bench: concurrent appenders awaiting each durable append (src/log), for a few seconds per record size,
// alone and with a loader reading and releasing behind them. Prints appends/s, latency percentiles, records per
// transaction (each transaction is one fdatasync plus one O_DSYNC meta write) and CPU per append; then one JSON line.
//
//   node --import tsx bench/log.ts [--seconds 3] [--appenders 64] [--sizes 200,4096] [--dir path] [--json-out file]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { open } from 'lmdb';
import { DurableLog } from '../src/log/durable-log.ts';
import { machineInfo } from './lib/processes.ts';
import { formatTable, parseArgs, round, uptimeLine } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const SECONDS = Number(args.get('seconds') ?? 3);
const APPENDERS = Number(args.get('appenders') ?? 64);
const SIZES = (args.get('sizes') ?? '200,4096').split(',').map(Number);
const JSON_OUT = args.get('json-out');
const BASE_DIR = args.get('dir') ?? os.tmpdir();

interface Run {
  size: number;
  loader: boolean;
  appends: number;
  appendsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  recordsPerTransaction: number;
  cpuMicrosPerAppend: number;
}

function percentile(sorted: Float64Array, share: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!;
}

async function measure(size: number, withLoader: boolean): Promise<Run> {
  const workDir = fs.mkdtempSync(path.join(BASE_DIR, 'tma-bench-log-'));
  const dir = path.join(workDir, 'log');
  const log = await DurableLog.open(dir, { maxBytes: 8 * 1024 ** 3 });
  // a second handle on the same environment (lmdb shares it within a process) reads the transaction counter
  const peek = open({ path: dir, encoding: 'binary', overlappingSync: false, eventTurnBatching: false });
  const lastTxnId = () => (peek.getStats() as { lastTxnId: number }).lastTxnId;

  const value = Buffer.alloc(size, 0x61);
  const latencies: number[] = [];
  let loaded = 0;
  const loader = withLoader
    ? setInterval(() => {
        const records = log.read(loaded, { maxRecords: 50_000 });
        if (records.length === 0) return;
        loaded = records.at(-1)!.seq;
        void log.release(loaded);
      }, 20)
    : null;

  const txnsBefore = lastTxnId();
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const endAt = started + SECONDS * 1000;
  const appender = async () => {
    while (performance.now() < endAt) {
      const begin = performance.now();
      await log.append(value);
      latencies.push(performance.now() - begin);
    }
  };
  await Promise.all(Array.from({ length: APPENDERS }, appender));
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const transactions = lastTxnId() - txnsBefore;
  if (loader) clearInterval(loader);
  await peek.close();
  await log.close();
  fs.rmSync(workDir, { recursive: true, force: true });

  const sorted = Float64Array.from(latencies).sort();
  return {
    size,
    loader: withLoader,
    appends: latencies.length,
    appendsPerSecond: Math.round((latencies.length / elapsedMs) * 1000),
    p50Ms: round(percentile(sorted, 0.5), 3),
    p99Ms: round(percentile(sorted, 0.99), 3),
    maxMs: round(sorted[sorted.length - 1]!, 3),
    // the loader's releases are transactions too: with it, this is a lower bound
    recordsPerTransaction: round(latencies.length / Math.max(transactions, 1), 1),
    cpuMicrosPerAppend: round((cpu.user + cpu.system) / latencies.length, 2),
  };
}

async function main(): Promise<void> {
  const runs: Run[] = [];
  for (const size of SIZES) {
    for (const withLoader of [false, true]) {
      console.error(
        `[bench log] ${size} B records, ${APPENDERS} appenders, ${SECONDS} s${withLoader ? ', with a loader releasing' : ''}`,
      );
      runs.push(await measure(size, withLoader));
    }
  }
  console.log(
    `durable log: ${APPENDERS} concurrent appenders, each awaiting a durable append; ${SECONDS} s per row; ${BASE_DIR}`,
  );
  console.log(`${new Date().toISOString()}, ${uptimeLine()}`);
  console.log(
    formatTable(
      ['record', 'loader', 'appends/s', 'p50 ms', 'p99 ms', 'max ms', 'records/txn', 'CPU µs/append'],
      runs.map((run) => [
        `${run.size} B`,
        run.loader ? 'yes' : 'no',
        run.appendsPerSecond,
        run.p50Ms,
        run.p99Ms,
        run.maxMs,
        run.recordsPerTransaction,
        run.cpuMicrosPerAppend,
      ]),
    ),
  );
  const summary = {
    bench: 'log',
    date: new Date().toISOString(),
    machine: machineInfo(),
    seconds: SECONDS,
    appenders: APPENDERS,
    runs,
  };
  console.log('\n' + JSON.stringify(summary));
  if (JSON_OUT) fs.writeFileSync(JSON_OUT, JSON.stringify(summary, null, 2) + '\n');
}

await main();

// Child processes of a bench run (the service, the baseline server) and what the kernel says about
// them: CPU time and resident memory from /proc, so the figures are the child's own, not the bench's.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { rssParts, startNodeServer, type ServiceProcess } from '../../test/helpers/service-process.ts';

export type NodeProcess = ServiceProcess;

/** the service's limits out of the way, and quiet: a bench measures throughput, not refusals */
export const UNLIMITED_SERVICE_SETTINGS = {
  RATE_LIMIT_MAX: '1000000000',
  QUOTA_EVENTS_PER_DAY: '1000000000000',
  QUOTA_BYTES_PER_DAY: '1000000000000000',
  LOG_LEVEL: 'warn',
} as const;

/**
 * Settings that make a service child write a CPU profile of its main thread into dir when it exits (cpu-profile.mjs),
 * for a bench's `--cpu-prof DIR`: where the service's time goes during the bench's phases (self time per function).
 */
export function cpuProfileSettings(dir: string | undefined): Record<string, string> {
  if (dir === undefined) return {};
  fs.mkdirSync(dir, { recursive: true });
  return {
    NODE_OPTIONS: `--import ${path.resolve(import.meta.dirname, 'cpu-profile.mjs')}`,
    BENCH_CPU_PROF_DIR: path.resolve(dir),
  };
}

/** `node --import tsx <script>` from the project root (the tests' starter); resolves once GET /healthz answers 200 (a start on a busy machine may take minutes) */
export function startNode(script: string, env: Record<string, string>): Promise<NodeProcess> {
  return startNodeServer(script, env, 180_000);
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** user + system CPU seconds in a /proc stat file (of a process or one of its threads); 0 when it is gone */
function cpuSecondsIn(statFile: string): number {
  try {
    const stat = fs.readFileSync(statFile, 'utf8');
    // fields after the command name (which may contain spaces) start at state = field 3
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND; // utime, stime
  } catch {
    return 0;
  }
}

/** user + system CPU seconds a process has used so far (0 when it is gone) */
export const cpuSeconds = (pid: number): number => cpuSecondsIn(`/proc/${pid}/stat`);

/** user + system CPU seconds of each thread of a process so far, by thread id (empty when it is gone) */
export function threadCpuSeconds(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      threads.set(Number(tid), cpuSecondsIn(`/proc/${pid}/task/${tid}/stat`));
    }
  } catch {
    // gone
  }
  return threads;
}

/**
 * A process's CPU in a span, split by thread: its main thread (the one whose id is the process's), its busiest other
 * thread (in the service, the embedded store's) and all the rest (V8's helpers, libuv's pool, LMDB's writes).
 */
export function threadSplit(
  before: Map<number, number>,
  after: Map<number, number>,
  pid: number,
): { main: number; busiestOther: number; rest: number } {
  const used = [...after].map(([tid, seconds]) => ({ tid, seconds: seconds - (before.get(tid) ?? 0) }));
  const main = used.find((thread) => thread.tid === pid)?.seconds ?? 0;
  const others = used.filter((thread) => thread.tid !== pid).sort((a, b) => b.seconds - a.seconds);
  const busiestOther = others[0]?.seconds ?? 0;
  const rest = others.slice(1).reduce((sum, thread) => sum + thread.seconds, 0);
  return { main, busiestOther, rest };
}

/** samples a process's RSS every intervalMs; stop() returns the highest value seen, maxAnonymous() its anonymous part's */
export function rssSampler(pid: number, intervalMs = 100): { stop(): number; max(): number; maxAnonymous(): number } {
  let max = 0;
  let maxAnonymous = 0;
  const sample = () => {
    const { anon, file } = rssParts(pid);
    max = Math.max(max, anon + file);
    maxAnonymous = Math.max(maxAnonymous, anon);
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return max;
    },
    max: () => max,
    maxAnonymous: () => maxAnonymous,
  };
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  kernel: string;
  /** /proc/loadavg 1, 5, 15 minutes */
  loadavg: number[];
}

export function machineInfo(): MachineInfo {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel: os.release(),
    loadavg: os.loadavg().map((value) => Math.round(value * 100) / 100),
  };
}

/**
 * Runs a bench's main, then its cleanups (last added first) and removes its work directory, whatever
 * happened; exits non-zero only when main failed to run.
 */
export async function runBenchMain(
  main: () => Promise<void>,
  cleanups: (() => Promise<unknown>)[],
  workDir: string,
): Promise<never> {
  let failed = false;
  try {
    await main();
  } catch (error) {
    failed = true;
    console.error(error);
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((error: unknown) => console.error(error));
    fs.rmSync(workDir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

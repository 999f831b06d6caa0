// Child processes of a bench run (the service, the baseline server) and what the kernel says about
// them: CPU time and resident memory from /proc, so the figures are the child's own, not the bench's.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { childEnv, freePort, PROJECT_ROOT } from '../../test/helpers/service-process.ts';

export { freePort, PROJECT_ROOT };

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

export interface NodeProcess {
  pid: number;
  url: string;
  output(): string;
  /** SIGTERM, then SIGKILL after 15 s */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `node --import tsx <script>` from the project root; resolves once GET /healthz answers 200 */
export async function startNode(script: string, env: Record<string, string>, readyTimeoutMs = 60_000): Promise<NodeProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: PROJECT_ROOT,
    env: childEnv({ HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env, PORT: String(port) }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let text = '';
  const append = (chunk: Buffer) => {
    text += chunk.toString();
    if (text.length > 100_000) text = text.slice(-50_000);
  };
  child.stdout!.on('data', append);
  child.stderr!.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => (children.delete(child), resolve())));
  const url = `http://127.0.0.1:${port}`;
  const running = () => child.exitCode === null && child.signalCode === null;
  const proc: NodeProcess = {
    pid: child.pid!,
    url,
    output: () => text,
    async stop() {
      if (!running()) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    if (!running()) throw new Error(`${script} exited before it was ready:\n${text}`);
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.status === 200) return proc;
    } catch {
      // not yet
    }
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`${script} not ready within ${readyTimeoutMs} ms:\n${text}`);
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** user + system CPU seconds a process has used so far (0 when it is gone) */
export function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // fields after the command name (which may contain spaces) start at state = field 3
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND; // utime, stime
  } catch {
    return 0;
  }
}

/** resident set size in bytes (VmRSS), or 0 when the process is gone */
export function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** samples a process's RSS every intervalMs; stop() returns the highest value seen */
export function rssSampler(pid: number, intervalMs = 100): { stop(): number; max(): number } {
  let max = rssBytes(pid);
  const timer = setInterval(() => (max = Math.max(max, rssBytes(pid))), intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return max;
    },
    max: () => max,
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

// Runs the real service and the operator CLI as child processes from the build the global setup makes
// (node with `npm start`'s arguments, read from package.json), the way an operator does. Every child is tracked so a suite can kill what is left in afterAll, and the
// test process kills them on exit even when a suite never got that far.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

const children = new Set<ChildProcess>();

process.once('exit', () => {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
});

function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** SIGKILLs every child still running and waits until they are gone (for afterAll). */
export async function killAllChildren(): Promise<void> {
  await Promise.all(
    [...children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
          setTimeout(resolve, 5_000).unref();
        }),
    ),
  );
}

/** A port nobody listens on right now (the kernel picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The environment of a child: only what a shell needs plus the given settings (nothing leaks from the runner). */
export function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const key of ['PATH', 'HOME', 'LANG', 'TMPDIR', 'TZ', 'NODE_EXTRA_CA_CERTS']) {
    if (process.env[key] !== undefined) base[key] = process.env[key];
  }
  return { ...base, ...env };
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  pid: number;
  port: number;
  url: string;
  /** stdout and stderr so far, for failure messages */
  output(): string;
  exited: Promise<Exit>;
  running(): boolean;
  /** SIGKILL, resolved once the process is gone */
  kill(): Promise<Exit>;
  /** SIGTERM (or the given signal) and wait, SIGKILL after timeoutMs; resolves with how it ended */
  stop(timeoutMs?: number, signal?: NodeJS.Signals): Promise<Exit>;
}

function collect(child: ChildProcess): () => string {
  let text = '';
  const append = (chunk: Buffer) => {
    text += chunk.toString('utf8');
    if (text.length > 200_000) text = text.slice(-100_000);
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return () => text;
}

/** resident set size in bytes (VmRSS), or 0 when the process is gone */
/** resident memory by kind (kB fields of /proc/pid/status): anonymous (heap, buffers) and file-backed (mapped files such as the log) */
export function rssParts(pid: number): { anon: number; file: number } {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
    return { anon: field('RssAnon'), file: field('RssFile') + field('RssShmem') };
  } catch {
    return { anon: 0, file: 0 };
  }
}

export function rssBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** socket inodes listening on the TCP port (IPv4 and IPv6) */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT, st 0A is LISTEN, inode is the 10th field
      if (fields[1]?.endsWith(`:${hex}`) && fields[3] === '0A') inodes.add(fields[9]!);
    }
  }
  return inodes;
}

/** whether process pid holds a socket listening on port */
function listensOn(pid: number, port: number): boolean {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return false;
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match && inodes.has(match[1]!)) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

/** `npm start`'s script: `GLIBC_TUNABLES=${GLIBC_TUNABLES:-<setting>} exec node <arguments>` */
const START_SCRIPT: string = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts
  .start;
/** the allocator setting `npm start` gives the service unless GLIBC_TUNABLES is set (a child gets none of it here) */
export const NPM_START_TUNABLES = /GLIBC_TUNABLES:-([^}]+)\}/.exec(START_SCRIPT)![1]!;
/**
 * the service's and the CLI's built entry points, the service's with `npm start`'s node arguments: a start through
 * tsx spends seconds transforming every module
 */
const SERVICE_ARGS = START_SCRIPT.split(' exec node ')[1]!.split(' ');
const CLI_ARGS = ['dist/server/cli.js'];

/**
 * Starts the built service (node with `npm start`'s arguments) with the given settings (PORT is chosen here unless given) and
 * resolves once GET /healthz answers 200 from the child itself. Rejects (and kills the child) when it exits
 * or is not ready in time.
 *
 * A chosen port is free when chosen, but the child takes seconds to listen on it: long enough, with suites
 * running in parallel, for another suite's process to take it first (seen: /healthz answered by the wrong
 * service, then the child died of EADDRINUSE). So the port must be held by the child (read from /proc), and
 * a child that lost its port is started again on another one.
 */
export function startServiceProcess(env: Record<string, string>, readyTimeoutMs = 180_000): Promise<ServiceProcess> {
  return startServer(SERVICE_ARGS, env, readyTimeoutMs);
}

/** startServiceProcess for any HTTP server script of the project that serves GET /healthz (the bench's), through tsx */
export function startNodeServer(
  script: string,
  env: Record<string, string>,
  readyTimeoutMs = 180_000,
): Promise<ServiceProcess> {
  return startServer(['--import', 'tsx', script], env, readyTimeoutMs);
}

async function startServer(
  nodeArgs: string[],
  env: Record<string, string>,
  readyTimeoutMs: number,
): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServerOnce(nodeArgs, env, readyTimeoutMs);
    } catch (error) {
      if (!(error instanceof PortTakenError) || env.PORT || attempt >= 3) throw error;
    }
  }
}

class PortTakenError extends Error {}

async function startServerOnce(
  nodeArgs: string[],
  env: Record<string, string>,
  readyTimeoutMs: number,
): Promise<ServiceProcess> {
  const port = env.PORT ? Number(env.PORT) : await freePort();
  const child = track(
    spawn(process.execPath, nodeArgs, {
      cwd: PROJECT_ROOT,
      env: childEnv({ HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env, PORT: String(port) }),
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
  const output = collect(child);
  const exited = new Promise<Exit>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const running = () => child.exitCode === null && child.signalCode === null;
  const url = `http://127.0.0.1:${port}`;
  const service: ServiceProcess = {
    pid: child.pid!,
    port,
    url,
    output,
    exited,
    running,
    async kill() {
      if (running()) child.kill('SIGKILL');
      return exited;
    },
    async stop(timeoutMs = 15_000, signal: NodeJS.Signals = 'SIGTERM') {
      if (!running()) return exited;
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const exit = await exited;
      clearTimeout(timer);
      return exit;
    },
  };

  const script = nodeArgs.at(-1);
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    if (!running()) {
      const exit = await exited;
      const message = `${script} exited before it was ready (${exit.code ?? exit.signal}):\n${output()}`;
      throw output().includes('EADDRINUSE') ? new PortTakenError(message) : new Error(message);
    }
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) });
      await response.arrayBuffer();
      if (response.status === 200 && listensOn(child.pid!, port)) return service;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  await service.kill();
  throw new Error(`${script} not ready within ${readyTimeoutMs} ms:\n${output()}`);
}

export interface CliResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node dist/server/cli.js <args>` (what `npm run -s cli --` runs) with the given settings. */
export function runCli(env: Record<string, string>, args: string[], timeoutMs = 180_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = track(
      spawn(process.execPath, [...CLI_ARGS, ...args], {
        cwd: PROJECT_ROOT,
        env: childEnv({ LOG_LEVEL: 'warn', ...env }),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(`cli ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`),
      );
    }, timeoutMs);
    child.once('error', (error) => (clearTimeout(timer), reject(error)));
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, stdout, stderr });
    });
  });
}

/** runCli with --json: exit code 0 and exactly one JSON document on stdout, parsed. */
export async function runCliJson<T = Record<string, unknown>>(env: Record<string, string>, args: string[]): Promise<T> {
  const result = await runCli(env, [...args, '--json']);
  if (result.exitCode !== 0) {
    throw new Error(
      `cli ${args.join(' ')} exited with ${result.exitCode}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(
      `cli ${args.join(' ')} did not print one JSON document:\n${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
}

/** waits until the service's durable log holds nothing for the store (its /healthz backlog); false after timeoutMs */
export async function logDrained(service: ServiceProcess, timeoutMs = 30_000): Promise<boolean> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const response = await fetch(`${service.url}/healthz`).catch(() => null);
    const body = response?.ok ? ((await response.json()) as { backlog?: { requests: number } }) : null;
    if (body?.backlog?.requests === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return false;
}

// The service as a self-hoster runs it: `npm start` and `npm run cli` run the build in dist/server (made by `npm ci`,
// here by the global setup) with plain node: no TypeScript loader, no esbuild; stack traces name src/ lines.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { processGroup } from '../helpers/process-group.ts';
import { childEnv, freePort, PROJECT_ROOT } from '../helpers/service-process.ts';

const started: ChildProcess[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const child of started) {
    try {
      process.kill(-child.pid!, 'SIGKILL'); // the whole group: npm and what it started
    } catch {
      // gone already
    }
  }
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'build-run-'));
  dirs.push(dir);
  return dir;
}

/** runs `command args` in the project root in a process group of its own; output collected */
function run(command: string, args: string[], env: Record<string, string>) {
  const child = spawn(command, args, {
    cwd: PROJECT_ROOT,
    env: childEnv({ LOG_LEVEL: 'warn', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  started.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, output: () => output };
}

async function waitForHealthzOk(url: string, running: () => boolean, output: () => string): Promise<void> {
  // a fresh DATA_DIR makes its cluster first: on a shared machine that takes minutes
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline) {
    if (!running()) throw new Error(`npm start exited before /healthz answered 200:\n${output()}`);
    const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) }).catch(() => null);
    if (response?.status === 200) return;
    await response?.arrayBuffer();
    await sleep(200);
  }
  throw new Error(`npm start: /healthz did not answer 200 within 600 s:\n${output()}`);
}

describe('the built service', () => {
  it('`npm start` runs dist/server/main.js with plain node, and `npm run cli` reaches it from the build', async () => {
    const port = await freePort();
    const env = { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: path.join(tempDir(), 'data') };
    const npm = run('npm', ['start'], env);
    const running = () => npm.child.exitCode === null && npm.child.signalCode === null;
    await waitForHealthzOk(`http://127.0.0.1:${port}`, running, npm.output);

    const group = processGroup(npm.child.pid!);
    const described = group.map((entry) => entry.command).join('\n');
    const services = group.filter((entry) => entry.command.includes('dist/server/main.js'));
    expect(
      services.map((entry) => entry.command),
      described,
    ).toEqual([
      expect.stringMatching(
        /(^|\/)node --max-semi-space-size=2 --heap-growing-percent=50 --wasm-tiering-budget=180000000 dist\/server\/main\.js$/,
      ),
    ]);
    // npm is all else there is: the script's shell execs node, and the process that answered "starting" has gone
    // (it exits after handing its socket over, so it may still be leaving when /healthz first says ok)
    const others = () =>
      processGroup(npm.child.pid!)
        .filter((other) => !other.command.includes('dist/server/main.js'))
        .map((entry) => entry.command);
    await expect.poll(others, { timeout: 10_000 }).toEqual(['npm start']);
    expect(described).not.toMatch(/tsx|esbuild|\.ts\b/);

    const cli = run(
      'npm',
      [
        'run',
        '-s',
        'cli',
        '--',
        'tokens',
        'create',
        '--bot',
        '@built_bot',
        '--domain',
        'built.example.com',
        '--app-name',
        'built_app',
        '--json',
      ],
      env,
    );
    expect(await cli.exited, cli.output()).toBe(0);
    expect(JSON.parse(cli.output())).toMatchObject({ app_name: 'built_app', token: expect.stringMatching(/^tma_/) });
    const show = run('npm', ['run', '-s', 'cli', '--', 'apps', 'show', '--app-name', 'built_app', '--json'], env);
    expect(await show.exited, show.output()).toBe(0);
    expect(JSON.parse(show.output())).toMatchObject({ app_name: 'built_app', events_total: 0 });

    // a supervisor stops what it started: npm passes SIGTERM on to the service, which stops cleanly
    process.kill(npm.child.pid!, 'SIGTERM');
    expect(await npm.exited, npm.output()).toBe(0);
    await expect
      .poll(() => processGroup(npm.child.pid!).map((entry) => entry.command), {
        timeout: 60_000,
        message: 'the service stops once npm start got SIGTERM',
      })
      .toEqual([]);
  }, 900_000);

  it('starts again at once after `kill -9` of the whole `npm start` group: a dead owner never holds DATA_DIR', async () => {
    const dataDir = path.join(tempDir(), 'data');
    for (let attempt = 1; attempt <= 3; attempt++) {
      const port = await freePort();
      const npm = run('npm', ['start'], { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir });
      const running = () => npm.child.exitCode === null && npm.child.signalCode === null;
      await waitForHealthzOk(`http://127.0.0.1:${port}`, running, npm.output);
      process.kill(-npm.child.pid!, 'SIGKILL');
      await npm.exited;
    }
    // the fourth start, as the others, is not refused: the kernel freed the killed owners' locks, reaped or not
    const port = await freePort();
    const last = run('node', ['dist/server/main.js'], { PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir });
    const running = () => last.child.exitCode === null && last.child.signalCode === null;
    await waitForHealthzOk(`http://127.0.0.1:${port}`, running, last.output);
    expect(last.output()).not.toMatch(/is in use by/);
    process.kill(-last.child.pid!, 'SIGKILL');
  }, 900_000);

  it('a stack trace from the build names the src/ file and line', async () => {
    // a DATA_DIR that cannot be made: the store's open fails with an error the start does not expect
    const service = run('node', ['dist/server/main.js'], {
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      DATA_DIR: '/dev/null/data',
    });
    expect(await service.exited).toBe(1);
    expect(service.output()).toContain('ENOTDIR');
    expect(service.output()).toMatch(/at openStore \(.*\/src\/db\/store\.ts:\d+:\d+\)/);
    expect(service.output()).not.toContain('dist/server');
  });

  it('`npm run cli -- --help` answers from the build without a store', async () => {
    const dataDir = path.join(tempDir(), 'never-made');
    const help = run('npm', ['run', '-s', 'cli', '--', '--help'], { DATA_DIR: dataDir });
    expect(await help.exited, help.output()).toBe(0);
    expect(help.output()).toMatch(/^Usage: npm run -s cli -- <command>/);
    expect(fs.existsSync(dataDir)).toBe(false);
  });
});

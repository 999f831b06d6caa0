// While the service prepares its store it is alive for a supervisor: /healthz answers 503 "starting" (not in rotation),
// requests get a clear refusal, and once the store is ready the same socket serves the app.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, freePort, PROJECT_ROOT, startNodeServer } from '../helpers/service-process.ts';
import { MESSAGES } from '../../src/ingest/http-error.ts';
import { makeEvent } from '../helpers/events.ts';
import { tempDir } from '../helpers/service.ts';

/** well formed, never issued */
const TOKEN = `tma_${'0'.repeat(40)}`;

let service: ChildProcess | undefined;
let stopped: number | undefined;

afterAll(() => {
  if (stopped) process.kill(stopped, 'SIGCONT');
  if (service?.pid) process.kill(service.pid, 'SIGCONT');
  service?.kill('SIGKILL');
});

/** an event of an app never registered, with a made-up token */
function sendEvent(url: string): Promise<Response> {
  return fetch(`${url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'analytics-auth-token': TOKEN, origin: 'https://a.example' },
    body: JSON.stringify(makeEvent('some_app')),
  });
}

/** the child of pid whose command line names what, if it runs */
function childRunning(pid: number, what: string): number | undefined {
  for (const entry of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== pid) continue;
      if (fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(what)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

describe('a starting service', () => {
  it('started from its source through tsx, as in development, answers "starting" from its own process and gets ready', async () => {
    const started = await startNodeServer('src/main.ts', { DATA_DIR: path.join(tempDir(), 'data'), LOG_LEVEL: 'warn' });
    try {
      expect((await fetch(`${started.url}/healthz`)).status).toBe(200);
    } finally {
      await started.stop();
    }
  });

  it('answers /healthz 503 "starting" while it makes its store, and 200 "ok" once ready, on the same port', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    service = spawn(process.execPath, ['dist/server/main.js'], {
      cwd: PROJECT_ROOT,
      env: childEnv({
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        DATA_DIR: path.join(tempDir(), 'data'),
        // a new database made by initdb, not copied from the prebuilt one, so the start can be held while it runs
        EMBEDDED_CLUSTER_TEMPLATE: 'none',
      }),
      stdio: 'ignore',
    });
    // a fresh DATA_DIR: the cluster is made in a child process, held here, so the start waits as long as the test
    // needs (it makes the cluster after it listens)
    await expect
      .poll(() => childRunning(service!.pid!, 'pglite-cluster'), {
        timeout: 300_000,
        interval: 20,
        message: 'the service starts making its cluster',
      })
      .toBeDefined();
    stopped = childRunning(service.pid!, 'pglite-cluster')!;
    process.kill(stopped, 'SIGSTOP');

    // the port opens beside the store's opening: it may open a moment after the cluster's process starts
    await expect
      .poll(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status, {
        timeout: 60_000,
        interval: 20,
        message: 'the port opens while the store is made',
      })
      .toBe(503);
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toEqual({ status: 'starting', reason: expect.any(String), store: 'embedded' });
    // the answers do not wait for the service's main thread (busy evaluating its code, compiling Prisma's engine):
    // with the service's process stopped outright, the socket still answers "starting"
    process.kill(service.pid!, 'SIGSTOP');
    try {
      const whileStopped = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
      expect(whileStopped.status).toBe(503);
      expect(await whileStopped.json()).toMatchObject({ status: 'starting' });
    } finally {
      process.kill(service.pid!, 'SIGCONT');
    }
    const events = await sendEvent(url);
    expect(events.status).toBe(400);
    expect(await events.json()).toEqual({ message: MESSAGES.failedToRecord });
    const page = await fetch(`${url}/`);
    expect(page.status).toBe(503);
    expect(page.headers.get('retry-after')).toBe('1');

    // the process answering "starting" gone (killed by hand, out of memory): the service takes the port itself
    const answering = childRunning(service.pid!, 'starting-answers');
    expect(answering, 'a process of its own answers "starting"').toBeDefined();
    process.kill(answering!, 'SIGKILL');

    process.kill(stopped, 'SIGCONT');
    stopped = undefined;
    await expect
      .poll(async () => (await fetch(`${url}/healthz`).catch(() => null))?.status, {
        timeout: 600_000,
        interval: 200,
        message: 'the service answers /healthz 200 once its store is made and migrated',
      })
      .toBe(200);
    expect(await (await fetch(`${url}/healthz`)).json()).toMatchObject({ status: 'ok', store: 'embedded' });
    // the app took the socket over: its routes answer, the refusal of a made-up token among them
    const refused = await sendEvent(url);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ message: MESSAGES.tokenInvalid });
  }, 900_000);

  it('loses no request at the hand-over: every one sent after the port opened, slow ones too, is answered "starting" or by the app', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/healthz`;
    const handover = spawn(process.execPath, ['dist/server/main.js'], {
      cwd: PROJECT_ROOT,
      env: childEnv({
        HOST: '127.0.0.1',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        DATA_DIR: path.join(tempDir(), 'data'),
      }),
      stdio: 'ignore',
    });
    try {
      const answers: (number | string)[] = [];
      // a client that connects, then takes 50 ms to send its request: at the hand-over some are connected and silent
      const ask = () =>
        new Promise<void>((resolve) => {
          const socket = net.connect(port, '127.0.0.1');
          let text = '';
          socket.setTimeout(30_000, () => socket.destroy(new Error('timeout')));
          socket.once('connect', () =>
            setTimeout(() => socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'), 50),
          );
          socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
          socket.once('close', () => {
            answers.push(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]) || `no answer: ${text.slice(0, 40)}`);
            resolve();
          });
          socket.once('error', (error: NodeJS.ErrnoException) => answers.push(error.code ?? error.message));
        });
      // until the port opens, refusals are expected
      await expect
        .poll(async () => (await fetch(url).catch(() => null))?.status, { timeout: 300_000, interval: 10 })
        .toBeDefined();
      // a request every 5 ms, each on a connection of its own, until the app answers
      const asked: Promise<unknown>[] = [];
      while (!answers.includes(200)) {
        asked.push(ask());
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (asked.length > 60_000) break;
      }
      for (let i = 0; i < 40; i++) asked.push(ask());
      await Promise.all(asked);
      expect(answers.filter((answer) => answer !== 503 && answer !== 200)).toEqual([]);
      expect(answers.filter((answer) => answer === 503).length, 'requests were answered "starting"').toBeGreaterThan(0);
    } finally {
      handover.kill('SIGKILL');
    }
  }, 900_000);
});

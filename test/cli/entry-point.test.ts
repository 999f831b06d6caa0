// The operator CLI as operators run it, `npm run -s cli -- …` in a process of its own: the embedded store opened by
// the command, exit codes and `--json` on errors, two commands at once, commands through a running service's control
// socket, a second owner of one data directory refused, and output into a pipe its reader closes early.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, START_TIMEOUT_MS } from '../helpers/cli.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import {
  childEnv,
  killAllChildren,
  PROJECT_ROOT,
  type ServiceProcess,
  startServiceProcess,
} from '../helpers/service-process.ts';
import { startTestService, tempDir } from '../helpers/service.ts';

/** a hang guard, not a speed check: a CLI process starts Node and the store, which a loaded machine slows */
const CLI_DEADLINE_MS = 180_000;
/** a test of several CLI processes one after another */
const TEST_TIMEOUT_MS = 900_000;

interface Run {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * `npm run -s cli -- <args>` with only the given settings; `onStdout` may end the read early. The command runs in a
 * process group of its own, so a run past its deadline is killed with the node process npm started.
 */
function npmCli(env: Record<string, string>, args: string[], onStdout?: (chunk: Buffer, stop: () => void) => void) {
  return new Promise<Run>((resolve, reject) => {
    const child = spawn('npm', ['run', '-s', 'cli', '--', ...args], {
      cwd: PROJECT_ROOT,
      env: childEnv({ LOG_LEVEL: 'warn', ...env }),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      onStdout?.(chunk, () => child.stdout.destroy());
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      reject(new Error(`npm run -s cli -- ${args.join(' ')} did not end within ${CLI_DEADLINE_MS} ms\n${stderr}`));
    }, CLI_DEADLINE_MS);
    child.once('error', (error) => (clearTimeout(timer), reject(error)));
    child.once('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode: exitCode ?? -1, stdout, stderr });
    });
  });
}

const createApp = (env: Record<string, string>, name: string, ...more: string[]) =>
  npmCli(env, [
    ...['tokens', 'create', '--bot', `@${name}_bot`, '--domain', `${name.replaceAll('_', '-')}.example.com`],
    ...['--app-name', name, ...more],
  ]);

afterAll(() => killAllChildren());

describe('without a running service', () => {
  // one store for these cases (a fresh embedded store costs an initdb): each checks only what it made
  const env = { DATA_DIR: tempDir() };

  it(
    'opens the embedded store itself, prints what the command made and exits 0',
    async () => {
      const created = json(await createApp(env, 'entry_demo', '--json'));
      expect(created).toMatchObject({ app_name: 'entry_demo', bot: '@entry_demo_bot' });
      const listed = await npmCli(env, ['tokens', 'list']);
      expect(listed).toMatchObject({ exitCode: 0, stderr: '' });
      expect(listed.stdout).toMatch(/^entry_demo\ttma_\w{6}\tentry-demo\.example\.com\tno events yet$/m);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'exits 2 with the usage on bad usage, 1 on a refusal, and prints errors as JSON with --json',
    async () => {
      const none = await npmCli(env, []);
      expect(none.exitCode).toBe(2);
      expect(none.stdout).toMatch(/^Usage: npm run -s cli -- <command> \[options\]\n/);
      const unknown = await npmCli(env, ['bogus']);
      expect(unknown).toMatchObject({ exitCode: 2, stdout: '' });
      expect(unknown.stderr).toMatch(/^unknown command "bogus"\n\nUsage:/);
      const refused = await npmCli(env, ['apps', 'show', '--app-name', 'nope', '--json']);
      expect(refused).toEqual({ exitCode: 1, stdout: '{"error":"There is no app named \\"nope\\"."}\n', stderr: '' });
      // a setting the command cannot use: one line, no stack trace; JSON with --json
      const badPort = await npmCli({ ...env, PORT: 'abc' }, ['tokens', 'list', '--json']);
      expect(badPort).toEqual({
        exitCode: 1,
        stdout: '{"error":"PORT must be a whole number, got \\"abc\\""}\n',
        stderr: '',
      });
      const badPortText = await npmCli({ ...env, PORT: 'abc' }, ['tokens', 'list']);
      expect(badPortText).toEqual({ exitCode: 1, stdout: '', stderr: 'PORT must be a whole number, got "abc"\n' });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'runs two commands at once on one embedded store: the second waits for the first instead of failing',
    async () => {
      const [created, listed] = await Promise.all([
        createApp(env, 'busy_demo', '--json'),
        npmCli(env, ['tokens', 'list', '--json']),
      ]);
      expect(json(created).app_name).toBe('busy_demo');
      expect(Array.isArray(json(listed))).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'stops quietly when the reader of its output goes away after 100 bytes',
    async () => {
      const dataDir = tempDir('tma-cli-pipe-');
      // more apps than a pipe's buffer holds as JSON, so the CLI is still writing when the reader leaves
      const service = await startTestService({ DATA_DIR: dataDir });
      await service.store.sql.query(
        `INSERT INTO apps (app_name, bot, domains, updated_at)
       SELECT 'pipe_app_' || n, '@pipe_test_bot', ARRAY['app' || n || '.example.com'], now() FROM generate_series(1, 3000) AS n`,
      );
      await service.close();

      let read = 0;
      const run = await npmCli({ DATA_DIR: dataDir }, ['tokens', 'list', '--json'], (chunk, stop) => {
        read += chunk.length;
        if (read >= 100) stop();
      });
      expect(read).toBeGreaterThanOrEqual(100);
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );
});

describe('while the service runs in embedded mode', () => {
  const env = { DATA_DIR: tempDir() };
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await startServiceProcess(env, START_TIMEOUT_MS);
  }, START_TIMEOUT_MS + 60_000);
  afterAll(() => service?.kill());

  it(
    'runs commands through the service; tokens work and stop working at once',
    async () => {
      const created = json(await createApp(env, 'live_demo', '--json'));
      const event = () => makeEvent('live_demo');
      const origin = 'https://live-demo.example.com';
      expect((await postEvents(service.url, event(), { token: created.token, origin })).status).toBe(201);
      const shown = json(await npmCli(env, ['apps', 'show', '--app-name', 'live_demo', '--json']));
      expect(shown.events_total).toBe(1);
      expect(Date.now() - Date.parse(shown.last_event_at)).toBeLessThan(10 * 60_000);

      const regenerated = json(await npmCli(env, ['tokens', 'regenerate', '--app-name', 'live_demo', '--json']));
      expect((await postEvents(service.url, event(), { token: created.token, origin })).text).toBe(
        '{"message":"Token is invalid."}',
      );
      expect((await postEvents(service.url, event(), { token: regenerated.token, origin })).status).toBe(201);

      json(await npmCli(env, ['tokens', 'revoke', '--app-name', 'live_demo', '--json']));
      expect((await postEvents(service.url, event(), { token: regenerated.token, origin })).text).toBe(
        '{"message":"Token is invalid."}',
      );

      // rejections are written about once a second
      await expect
        .poll(async () => json(await npmCli(env, ['apps', 'show', '--app-name', 'live_demo', '--json'])), {
          message: 'apps show to name the last rejection',
          timeout: 2 * CLI_DEADLINE_MS,
          interval: 1_000,
        })
        .toMatchObject({
          events_total: 2,
          last_rejection: { status: 400, message: 'Token is invalid.', origin },
        });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'refuses a second service on the same data directory, leaving the first untouched',
    async () => {
      await expect(startServiceProcess(env, START_TIMEOUT_MS)).rejects.toThrow(/is in use by process \d+/);
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    },
    TEST_TIMEOUT_MS,
  );
});

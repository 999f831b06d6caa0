// The operator CLI as operators run it: with no service running, through a running embedded service,
// a second owner of one data directory refused, and the settings of another service's store refused.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { available } from './helpers/environment.ts';
import { createTestDatabase, type TestDatabase } from './helpers/postgres.ts';
import { runCli, startServiceProcess, type ServiceProcess } from './helpers/service-process.ts';
import { makeEvent, postEvents } from './helpers/events.ts';
import { tempDir } from './helpers/service.ts';

/** each CLI run is a new Node process that opens the store: seconds apiece on a loaded 2-core machine */
const CLI_TEST_TIMEOUT = 240_000;

function json(result: { exitCode: number | null; stdout: string; stderr: string }) {
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toHaveLength(1); // one JSON document and nothing else
  return JSON.parse(result.stdout);
}

describe('without a running service (embedded store opened by the CLI)', () => {
  const env = { DATA_DIR: tempDir() };

  it(
    'creates, lists, shows, regenerates and revokes',
    async () => {
      const created = json(
        await runCli(env, [
          'tokens',
          'create',
          '--bot',
          'https://t.me/Shop_Demo_Bot',
          '--domain',
          'https://Shop.Example.com/app?x=1',
          '--app-name',
          'shop_demo',
          '--owner',
          '1001',
          '--json',
        ]),
      );
      expect(Object.keys(created).sort()).toEqual(['app_name', 'bot', 'domain', 'token']);
      expect(created).toMatchObject({ app_name: 'shop_demo', bot: '@Shop_Demo_Bot', domain: 'shop.example.com' });
      expect(created.token).toMatch(/^tma_[0-9A-Za-z]{40}$/);

      const listed = await runCli(env, ['tokens', 'list', '--json']);
      expect(listed.stdout).not.toContain(created.token);
      expect(json(listed)).toEqual([
        expect.objectContaining({
          app_name: 'shop_demo',
          domains: ['shop.example.com'],
          token_prefix: created.token.slice(0, 10),
          revoked: false,
          last_event_at: null,
        }),
      ]);
      expect(json(await runCli(env, ['tokens', 'list', '--owner', '1001', '--json']))).toHaveLength(1);
      expect(json(await runCli(env, ['tokens', 'list', '--owner', '2002', '--json']))).toEqual([]);

      expect(json(await runCli(env, ['apps', 'show', '--app-name', 'shop_demo', '--json']))).toEqual({
        app_name: 'shop_demo',
        domains: ['shop.example.com'],
        bot: '@Shop_Demo_Bot',
        last_event_at: null,
        events_total: 0,
        last_rejection: null,
      });

      const regenerated = json(await runCli(env, ['tokens', 'regenerate', '--app-name', 'shop_demo', '--json']));
      expect(regenerated.token).not.toBe(created.token);
      expect(json(await runCli(env, ['tokens', 'revoke', '--app-name', 'shop_demo', '--json']))).toEqual({
        app_name: 'shop_demo',
        revoked: true,
      });
      expect(json(await runCli(env, ['tokens', 'list', '--json']))[0]).toMatchObject({
        token_prefix: null,
        revoked: true,
      });
    },
    CLI_TEST_TIMEOUT,
  );

  it(
    'explains bad input with a non-zero exit and changes nothing',
    async () => {
      const badBot = await runCli(env, [
        'tokens',
        'create',
        '--bot',
        '@not_a_b0t',
        '--domain',
        'a.example.com',
        '--app-name',
        'bad_bot_app',
      ]);
      expect(badBot.exitCode).toBe(2);
      expect(badBot.stderr).toContain('ending in "bot"');
      const ip = await runCli(env, [
        'tokens',
        'create',
        '--bot',
        '@good_bot',
        '--domain',
        '10.1.2.3',
        '--app-name',
        'ip_app',
        '--json',
      ]);
      expect(ip.exitCode).toBe(2);
      expect(JSON.parse(ip.stdout)).toEqual({ error: 'The domain must be a host name, not an IP address.' });
      const taken = await runCli(env, [
        'tokens',
        'create',
        '--bot',
        '@good_bot',
        '--domain',
        'a.example.com',
        '--app-name',
        'shop_demo',
        '--json',
      ]);
      expect(taken.exitCode).toBe(1);
      expect(JSON.parse(taken.stdout)).toEqual({ error: 'The app name "shop_demo" is already taken.' });
      const unknown = await runCli(env, ['apps', 'show', '--app-name', 'nope', '--json']);
      expect(unknown.exitCode).toBe(1);
      expect(JSON.parse(unknown.stdout)).toEqual({ error: 'There is no app named "nope".' });
      expect(
        json(await runCli(env, ['tokens', 'list', '--json'])).map((app: { app_name: string }) => app.app_name),
      ).toEqual(['shop_demo']);
    },
    CLI_TEST_TIMEOUT,
  );
});

describe('two commands at once on one embedded store', () => {
  it(
    'runs both: the second waits for the first instead of failing',
    async () => {
      const env = { DATA_DIR: tempDir() };
      const [created, listed] = await Promise.all([
        runCli(env, [
          'tokens',
          'create',
          '--bot',
          '@busy_demo_bot',
          '--domain',
          'busy.example.com',
          '--app-name',
          'busy_demo',
          '--json',
        ]),
        runCli(env, ['tokens', 'list', '--json']),
      ]);
      expect(json(created).app_name).toBe('busy_demo');
      expect(Array.isArray(json(listed))).toBe(true);
    },
    CLI_TEST_TIMEOUT,
  );
});

describe('while the service runs in embedded mode', () => {
  const env = { DATA_DIR: tempDir() };
  let service: ServiceProcess;

  beforeAll(async () => {
    service = await startServiceProcess(env);
  });
  afterAll(() => service?.kill());

  it(
    'runs commands through the service; tokens work and stop working at once',
    async () => {
      const created = json(
        await runCli(env, [
          'tokens',
          'create',
          '--bot',
          '@live_demo_bot',
          '--domain',
          'app.example.com',
          '--app-name',
          'live_demo',
          '--json',
        ]),
      );
      const event = () => makeEvent('live_demo');
      expect((await postEvents(service.url, event(), { token: created.token })).status).toBe(201);
      const shown = json(await runCli(env, ['apps', 'show', '--app-name', 'live_demo', '--json']));
      expect(shown.events_total).toBe(1);
      expect(Date.now() - Date.parse(shown.last_event_at)).toBeLessThan(60_000);

      const regenerated = json(await runCli(env, ['tokens', 'regenerate', '--app-name', 'live_demo', '--json']));
      expect((await postEvents(service.url, event(), { token: created.token })).text).toBe(
        '{"message":"Token is invalid."}',
      );
      expect((await postEvents(service.url, event(), { token: regenerated.token })).status).toBe(201);

      json(await runCli(env, ['tokens', 'revoke', '--app-name', 'live_demo', '--json']));
      expect((await postEvents(service.url, event(), { token: regenerated.token })).text).toBe(
        '{"message":"Token is invalid."}',
      );

      await new Promise((resolve) => setTimeout(resolve, 1_200)); // rejections are written about once a second
      const after = json(await runCli(env, ['apps', 'show', '--app-name', 'live_demo', '--json']));
      expect(after.events_total).toBe(2);
      expect(after.last_rejection).toMatchObject({
        status: 400,
        message: 'Token is invalid.',
        origin: 'https://app.example.com',
      });
    },
    CLI_TEST_TIMEOUT,
  );

  it(
    'refuses a second service on the same data directory, leaving the first untouched',
    async () => {
      await expect(startServiceProcess(env, 30_000)).rejects.toThrow(/is in use by process \d+/);
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    },
    CLI_TEST_TIMEOUT,
  );
});

describe.runIf(await available('PostgreSQL'))("another service's settings", () => {
  let database: TestDatabase;
  const dataDir = tempDir();
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());
  const createApp = (env: Record<string, string>, name: string) =>
    runCli(env, [
      'tokens',
      'create',
      '--bot',
      `@${name}_bot`,
      '--domain',
      `${name.replaceAll('_', '-')}.example.com`,
      '--app-name',
      name,
      '--json',
    ]);

  it(
    'refuses, with the reason (as JSON with --json), to open an empty embedded store beside a PostgreSQL one, a database of another secret, or a bad setting',
    async () => {
      const onServer = { DATA_DIR: dataDir, DATABASE_URL: database.url };
      json(await createApp(onServer, 'pg_app'));
      // DATABASE_URL forgotten: no token goes into a second store nobody reads
      const forgotten = await createApp({ DATA_DIR: dataDir }, 'lost_app');
      expect(forgotten.exitCode).toBe(1);
      expect(JSON.parse(forgotten.stdout).error).toMatch(/belongs to a service on PostgreSQL: set DATABASE_URL/);
      expect(fs.existsSync(path.join(dataDir, 'pgdata'))).toBe(false);
      expect(
        json(await runCli(onServer, ['tokens', 'list', '--json'])).map((app: { app_name: string }) => app.app_name),
      ).toEqual(['pg_app']);

      // the right database without its secret (another DATA_DIR): one line, no stack trace
      const otherSecret = { DATA_DIR: tempDir(), DATABASE_URL: database.url };
      const refused = await runCli(otherSecret, ['tokens', 'list']);
      expect(refused.exitCode).toBe(1);
      expect(refused.stderr.trim()).toMatch(/^this database was set up with a different secret: [^\n]+$/);
      expect(JSON.parse((await runCli(otherSecret, ['tokens', 'list', '--json'])).stdout).error).toMatch(
        /different secret/,
      );

      const badPort = await runCli({ ...onServer, PORT: 'abc' }, ['tokens', 'list', '--json']);
      expect({ exitCode: badPort.exitCode, stdout: JSON.parse(badPort.stdout) }).toEqual({
        exitCode: 1,
        stdout: { error: 'PORT must be a whole number, got "abc"' },
      });
    },
    CLI_TEST_TIMEOUT,
  );

  it(
    'leaves a data directory that holds an embedded store usable without DATABASE_URL',
    async () => {
      const other = await createTestDatabase();
      try {
        const embedded = { DATA_DIR: tempDir() };
        json(await createApp(embedded, 'own_app'));
        json(await runCli({ ...embedded, DATABASE_URL: other.url }, ['tokens', 'list', '--json']));
        expect(
          json(await runCli(embedded, ['tokens', 'list', '--json'])).map((app: { app_name: string }) => app.app_name),
        ).toEqual(['own_app']);
      } finally {
        await other.drop();
      }
    },
    CLI_TEST_TIMEOUT,
  );
});

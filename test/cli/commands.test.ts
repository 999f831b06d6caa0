// The operator CLI's tokens and apps commands run in process as the CLI prints them (JSON and exit codes, bad input
// refused), and the settings of another service's store refused; the process itself is test/cli/entry-point.test.ts.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, runCli, runCliWith, START_TIMEOUT_MS } from '../helpers/cli.ts';
import { available } from '../helpers/environment.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { startTestService, tempDir, type TestService } from '../helpers/service.ts';

const appNames = (apps: { app_name: string }[]) => apps.map((app) => app.app_name);

describe('tokens and apps commands', () => {
  let service: TestService;
  const cli = (...argv: string[]) => runCli(service, ...argv);

  beforeAll(async () => {
    service = await startTestService();
  }, START_TIMEOUT_MS);
  afterAll(() => service?.close());

  it('creates, lists, shows, regenerates and revokes', async () => {
    const created = json(
      await cli(
        ...['tokens', 'create', '--bot', 'https://t.me/Shop_Demo_Bot', '--domain', 'https://Shop.Example.com/app?x=1'],
        ...['--app-name', 'shop_demo', '--owner', '1001', '--json'],
      ),
    );
    expect(Object.keys(created).sort()).toEqual(['app_name', 'bot', 'bot_id', 'domain', 'token']);
    expect(created).toMatchObject({ app_name: 'shop_demo', bot: '@Shop_Demo_Bot', domain: 'shop.example.com' });
    expect(created.token).toMatch(/^tma_[0-9A-Za-z]{40}$/);

    const listed = await cli('tokens', 'list', '--json');
    expect(listed.stdout).not.toContain(created.token);
    expect(json(listed)).toContainEqual(
      expect.objectContaining({
        app_name: 'shop_demo',
        domains: ['shop.example.com'],
        token_prefix: created.token.slice(0, 10),
        revoked: false,
        last_event_at: null,
      }),
    );
    expect(appNames(json(await cli('tokens', 'list', '--owner', '1001', '--json')))).toEqual(['shop_demo']);
    expect(json(await cli('tokens', 'list', '--owner', '2002', '--json'))).toEqual([]);

    expect(json(await cli('apps', 'show', '--app-name', 'shop_demo', '--json'))).toEqual({
      app_name: 'shop_demo',
      domains: ['shop.example.com'],
      bot: '@Shop_Demo_Bot',
      bot_id: null,
      last_event_at: null,
      events_total: 0,
      last_rejection: null,
      launches_7d: expect.objectContaining({ launches: 0, verified_users: 0 }),
    });

    const regenerated = json(await cli('tokens', 'regenerate', '--app-name', 'shop_demo', '--json'));
    expect(regenerated.token).not.toBe(created.token);
    expect(json(await cli('tokens', 'revoke', '--app-name', 'shop_demo', '--json'))).toEqual({
      app_name: 'shop_demo',
      revoked: true,
    });
    expect(json(await cli('tokens', 'list', '--owner', '1001', '--json'))[0]).toMatchObject({
      token_prefix: null,
      revoked: true,
    });
  });

  it('explains bad input with a non-zero exit and changes nothing', async () => {
    const create = (bot: string, domain: string, appName: string, ...more: string[]) =>
      cli('tokens', 'create', '--bot', bot, '--domain', domain, '--app-name', appName, ...more);
    json(await create('@taken_demo_bot', 'taken.example.com', 'taken_demo', '--json'));
    const before = json(await cli('tokens', 'list', '--json'));

    const badBot = await create('@not_a_b0t', 'a.example.com', 'bad_bot_app');
    expect(badBot.exitCode).toBe(2);
    expect(badBot.stderr).toContain('ending in "bot"');
    const ip = await create('@good_bot', '10.1.2.3', 'ip_app', '--json');
    expect(ip.exitCode).toBe(2);
    expect(JSON.parse(ip.stdout)).toEqual({ error: 'The domain must be a host name, not an IP address.' });
    const taken = await create('@good_bot', 'a.example.com', 'taken_demo', '--json');
    expect(taken.exitCode).toBe(1);
    expect(JSON.parse(taken.stdout)).toEqual({ error: 'The app name "taken_demo" is already taken.' });
    const unknown = await cli('apps', 'show', '--app-name', 'nope', '--json');
    expect(unknown.exitCode).toBe(1);
    expect(JSON.parse(unknown.stdout)).toEqual({ error: 'There is no app named "nope".' });
    expect(json(await cli('tokens', 'list', '--json'))).toEqual(before);
    expect(json(await cli('apps', 'show', '--app-name', 'taken_demo', '--json')).domains).toEqual([
      'taken.example.com',
    ]);
  });
});

describe.runIf(await available('PostgreSQL'))("another service's settings", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  }, START_TIMEOUT_MS);
  afterAll(() => database?.drop());
  const createApp = (env: Record<string, string>, name: string) =>
    runCliWith(env, [
      ...['tokens', 'create', '--bot', `@${name}_bot`, '--domain', `${name.replaceAll('_', '-')}.example.com`],
      ...['--app-name', name, '--json'],
    ]);

  it('refuses, with the reason (as JSON with --json), to open an empty embedded store beside a PostgreSQL one, a database of another secret, or a bad setting', async () => {
    const dataDir = tempDir();
    const onServer = { DATA_DIR: dataDir, DATABASE_URL: database.url };
    json(await createApp(onServer, 'pg_app'));
    // DATABASE_URL forgotten: no token goes into a second store nobody reads
    const forgotten = await createApp({ DATA_DIR: dataDir }, 'lost_app');
    expect(forgotten.exitCode).toBe(1);
    expect(JSON.parse(forgotten.stdout).error).toMatch(/belongs to a service on PostgreSQL: set DATABASE_URL/);
    expect(fs.existsSync(path.join(dataDir, 'pgdata'))).toBe(false);
    expect(appNames(json(await runCliWith(onServer, ['tokens', 'list', '--json'])))).toEqual(['pg_app']);

    // the right database without its secret (another DATA_DIR): one line, no stack trace
    const otherSecret = { DATA_DIR: tempDir(), DATABASE_URL: database.url };
    const refused = await runCliWith(otherSecret, ['tokens', 'list']);
    expect(refused.exitCode).toBe(1);
    expect(refused.stderr.trim()).toMatch(/^this database was set up with a different secret: [^\n]+$/);
    expect(JSON.parse((await runCliWith(otherSecret, ['tokens', 'list', '--json'])).stdout).error).toMatch(
      /different secret/,
    );

    const badPort = await runCliWith({ ...onServer, PORT: 'abc' }, ['tokens', 'list', '--json']);
    expect({ exitCode: badPort.exitCode, stdout: JSON.parse(badPort.stdout) }).toEqual({
      exitCode: 1,
      stdout: { error: 'PORT must be a whole number, got "abc"' },
    });
  });

  it(
    'leaves a data directory that holds an embedded store usable without DATABASE_URL',
    async () => {
      const other = await createTestDatabase();
      try {
        const embedded = { DATA_DIR: tempDir() };
        // an embedded store made by a service that has stopped since
        const service = await startTestService(embedded);
        await service.createApp('own_app');
        await service.close();
        json(await runCliWith({ ...embedded, DATABASE_URL: other.url }, ['tokens', 'list', '--json']));
        expect(appNames(json(await runCliWith(embedded, ['tokens', 'list', '--json'])))).toEqual(['own_app']);
      } finally {
        await other.drop();
      }
    },
    START_TIMEOUT_MS,
  );
});

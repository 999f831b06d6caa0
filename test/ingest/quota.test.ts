// Daily quotas per app: set by the operator CLI, answered 429 with the spec's message beyond them, nothing
// beyond them stored, the reason shown to the owner, counts kept across a restart and shared by two nodes,
// and a new UTC day accepts again.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { describeRejection } from '../../src/bot/texts.ts';
import { runCommand } from '../../src/cli/commands.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { openStore } from '../../src/db/store.ts';
import { DailyQuota } from '../../src/events/request/quota.ts';
import { buildApp } from '../../src/app/app.ts';
import { createServices } from '../../src/services.ts';
import { available } from '../helpers/environment.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestDatabase } from '../helpers/postgres.ts';
import { embeddedDataDir, migratedDatabase } from '../helpers/stores.ts';
import { startTestService, tempDir, type TestService } from '../helpers/service.ts';

const TOO_MANY = { message: 'Too many requests. Try again later.' };
const DAY_MS = 86_400_000;

/** the service over a data directory, with a clock the test can move forward */
async function startService(dataDir: string) {
  const clock = { offsetMs: 0 };
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    RATE_LIMIT_MAX: '100000',
  });
  const store = await openStore(config);
  const services = await createServices(config, store);
  await services.quota.stop();
  services.quota = new DailyQuota(
    store.sql,
    { eventsPerDay: config.quotaEventsPerDay, bytesPerDay: config.quotaBytesPerDay },
    { now: () => Date.now() + clock.offsetMs },
  );
  services.quota.start();
  const app = await buildApp(services);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return {
    url,
    services,
    clock,
    cli: async (...argv: string[]) => {
      const result = await runCommand(services, [...argv, '--json']);
      return { exitCode: result.exitCode, json: JSON.parse(result.stdout) };
    },
    storedEvents: async (appName: string) => {
      await services.ingestLog!.loader.caughtUp();
      const [row] = await store.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM events e JOIN apps a ON a.id = e.app_id WHERE a.app_name = $1`,
        [appName],
      );
      return row!.n;
    },
    close: async () => {
      await app.close();
      await services.stop();
      await store.close();
    },
  };
}

let running: Awaited<ReturnType<typeof startService>> | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

const secondsToNextUtcDay = () => (DAY_MS - (Date.now() % DAY_MS)) / 1000;

/** a running service's app of its own with a quota of 5 events a day, used up today; sends n events of it */
async function appAtQuota(service: Awaited<ReturnType<typeof startService>>, appName: string) {
  const { token } = await service.services.registry.createApp(
    { appName, bot: `@${appName}_bot`, domains: ['app.example.com'] },
    { surface: 'cli' },
  );
  const set = await service.cli('apps', 'quota', '--app-name', appName, '--events-per-day', '5');
  expect(set.exitCode).toBe(0);
  expect(set.json).toMatchObject({
    app_name: appName,
    events_per_day: 5,
    bytes_per_day: 10 * 1024 ** 3,
    source: { events_per_day: 'app', bytes_per_day: 'default' },
    today: { events: 0, bytes: 0 },
  });
  const send = (to: { url: string }, count: number) =>
    postEvents(
      to.url,
      Array.from({ length: count }, () => makeEvent(appName)),
      { token },
    );
  expect((await send(service, 3)).status).toBe(201);
  expect((await send(service, 2)).status).toBe(201);
  return send;
}

describe('daily quotas', () => {
  it('refuses events beyond the quota with 429 until the next UTC day, and stores none of them', async () => {
    const service = (running = await startService(await embeddedDataDir()));
    const send = await appAtQuota(service, 'quota_app');
    const refused = await send(service, 1);
    expect(refused.status).toBe(429);
    expect(refused.text).toBe(JSON.stringify(TOO_MANY));
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(Math.floor(secondsToNextUtcDay()) - 5);
    expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(Math.ceil(secondsToNextUtcDay()) + 1);
    expect((await send(service, 2)).status).toBe(429);
    expect(await service.storedEvents('quota_app')).toBe(5);
    expect((await service.cli('apps', 'quota', '--app-name', 'quota_app')).json.today).toMatchObject({ events: 5 });
  });

  it('tells the owner why, in the CLI and on the bot\'s app card: the daily event quota, not "rate limited"', async () => {
    const service = (running = await startService(await embeddedDataDir()));
    const send = await appAtQuota(service, 'quota_told_app');
    expect((await send(service, 1)).status).toBe(429);
    const shown = await service.cli('apps', 'show', '--app-name', 'quota_told_app');
    expect(shown.json.events_total).toBe(5);
    expect(shown.json.last_rejection).toMatchObject({
      status: 429,
      message: TOO_MANY.message,
      reason: 'daily event quota reached (5 events)',
    });
    const app = await service.services.registry.getApp('quota_told_app', { surface: 'cli', isAdmin: true });
    const [rejection] = await service.services.rejections.recent(app.appId, 1);
    expect(describeRejection(rejection!, new Date())).toMatch(
      /^429 daily event quota reached \(5 events\) from https:\/\/app\.example\.com, /,
    );
  });

  it('counts on after a restart from what the store counted today', async () => {
    const dataDir = await embeddedDataDir();
    const first = (running = await startService(dataDir));
    const send = await appAtQuota(first, 'quota_restart_app');
    await first.close();
    running = undefined;
    const again = (running = await startService(dataDir));
    expect((await send(again, 1)).status).toBe(429);
    expect(await again.storedEvents('quota_restart_app')).toBe(5);
  });

  it('accepts again on the next UTC day, up to the quota', async () => {
    const service = (running = await startService(await embeddedDataDir()));
    const send = await appAtQuota(service, 'quota_day_app');
    expect((await send(service, 1)).status).toBe(429);
    service.clock.offsetMs = secondsToNextUtcDay() * 1000 + 1_000;
    expect((await send(service, 5)).status).toBe(201);
    expect((await send(service, 1)).status).toBe(429);
    expect(await service.storedEvents('quota_day_app')).toBe(10);
  });
});

describe('daily quotas set by the CLI', () => {
  // one service for these tests, each on an app of its own (the clock is never moved here)
  let service: Awaited<ReturnType<typeof startService>>;
  beforeAll(async () => {
    service = await startService(await embeddedDataDir());
  });
  afterAll(() => service?.close());

  it("counts the bytes of the events too, and --default gives the app the service's quotas back", async () => {
    const { token } = await service.services.registry.createApp(
      { appName: 'bytes_app', bot: '@bytes_app_bot', domains: ['app.example.com'] },
      { surface: 'cli' },
    );
    const event = () => makeEvent('bytes_app', { custom_data: { note: 'x'.repeat(1_000) } });
    const size = JSON.stringify(event()).length;
    const quota = 3 * size + 10;
    expect(
      (await service.cli('apps', 'quota', '--app-name', 'bytes_app', '--bytes-per-day', String(quota))).json,
    ).toMatchObject({
      events_per_day: 10_000_000,
      bytes_per_day: quota,
      source: { events_per_day: 'default', bytes_per_day: 'app' },
    });
    const send = () => postEvents(service.url, event(), { token });
    expect([(await send()).status, (await send()).status, (await send()).status, (await send()).status]).toEqual([
      201, 201, 201, 429,
    ]);
    expect(await service.storedEvents('bytes_app')).toBe(3);
    expect((await service.cli('apps', 'show', '--app-name', 'bytes_app')).json.last_rejection).toMatchObject({
      status: 429,
      reason: `daily byte quota reached (${quota} bytes)`,
    });

    expect((await service.cli('apps', 'quota', '--app-name', 'bytes_app', '--default')).json).toMatchObject({
      bytes_per_day: 10 * 1024 ** 3,
      source: { events_per_day: 'default', bytes_per_day: 'default' },
      today: { events: 3, bytes: 3 * size },
    });
    expect((await send()).status).toBe(201);
  });

  it('refuses bad quotas with a clear message and changes nothing', async () => {
    await service.services.registry.createApp(
      { appName: 'strict_app', bot: '@strict_app_bot', domains: ['app.example.com'] },
      { surface: 'cli' },
    );
    await service.cli('apps', 'quota', '--app-name', 'strict_app', '--events-per-day', '7');
    for (const [args, error] of [
      [['--events-per-day', 'abc'], '--events-per-day must be a whole number from 1 to 9007199254740991.'],
      [['--events-per-day', '0'], '--events-per-day must be a whole number from 1 to 9007199254740991.'],
      [['--bytes-per-day', '1e9'], '--bytes-per-day must be a whole number from 1 to 9007199254740991.'],
      [['--default', '--events-per-day', '5'], '--default sets both quotas back to the defaults: give it alone'],
    ] as const) {
      expect(await service.cli('apps', 'quota', '--app-name', 'strict_app', ...args)).toEqual({
        exitCode: 2,
        json: { error },
      });
    }
    expect(await service.cli('apps', 'quota', '--app-name', 'no_such_app', '--events-per-day', '5')).toEqual({
      exitCode: 1,
      json: { error: 'There is no app named "no_such_app".' },
    });
    expect((await service.cli('apps', 'quota', '--app-name', 'strict_app')).json).toMatchObject({
      events_per_day: 7,
      source: { events_per_day: 'app' },
    });
    // the one change is in the audit log; the refused ones and the plain read are not
    const audited = await service.services.store.prisma.auditLog.findMany({
      where: { appName: 'strict_app', action: 'app.quota' },
    });
    expect(audited.map((entry) => ({ surface: entry.surface, detail: entry.detail }))).toEqual([
      { surface: 'cli', detail: { events_per_day: 7, admin: true } },
    ]);
  });
});

const postgres = await available('PostgreSQL');

describe.runIf(postgres)('daily quotas on two nodes sharing PostgreSQL', () => {
  let database: TestDatabase;
  let nodes: TestService[] = [];
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.close()));
    await database?.drop();
  });

  it('a node counts what the other stored once it has read the totals (every few seconds)', async () => {
    database = await migratedDatabase();
    const env = { DATABASE_URL: database.url, SECRET: 's'.repeat(40), RATE_LIMIT_MAX: '100000' };
    nodes = [
      await startTestService({ ...env, DATA_DIR: tempDir() }),
      await startTestService({ ...env, DATA_DIR: tempDir() }),
    ];
    const [nodeA, nodeB] = nodes as [TestService, TestService];
    const token = await nodeA.createApp('shared_quota_app');
    await nodeA.services.registry.setQuotas('shared_quota_app', { eventsPerDay: 4 }, { surface: 'cli', isAdmin: true });
    // both nodes read the quota within seconds
    await Promise.all(nodes.map((node) => node.services.quota.sync()));

    const batch = () => Array.from({ length: 2 }, () => makeEvent('shared_quota_app'));
    expect((await postEvents(nodeA.url, batch(), { token })).status).toBe(201);
    expect((await postEvents(nodeB.url, batch(), { token })).status).toBe(201);
    await Promise.all(nodes.map((node) => node.services.ingestLog!.loader.caughtUp()));
    await Promise.all(nodes.map((node) => node.services.quota.sync()));
    expect((await postEvents(nodeA.url, batch(), { token })).status).toBe(429);
    expect((await postEvents(nodeB.url, batch(), { token })).status).toBe(429);
    const [stored] = await nodeA.store.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events e JOIN apps a ON a.id = e.app_id WHERE a.app_name = 'shared_quota_app'`,
    );
    expect(stored!.n).toBe(4);
  });
});

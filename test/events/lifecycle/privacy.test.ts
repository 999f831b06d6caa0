// Privacy: after ingesting events (accepted and rejected, launches Telegram signed among them) and erasing one user's
// data, no raw Telegram user id, no client IP and nothing of the signed launch data (the user's names, username and
// photo) is anywhere in the database (the erase's audit entry included), its files, Redis, or the logs.
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../../src/db/store.ts';
import { runCliWith } from '../../helpers/cli.ts';
import { available, REDIS_URL } from '../../helpers/environment.ts';
import { makeEvent, postEvents } from '../../helpers/events.ts';
import { startServiceProcess, type ServiceProcess } from '../../helpers/service-process.ts';
import { tempDir } from '../../helpers/service.ts';
import { embeddedDataDir, migratedDatabase } from '../../helpers/stores.ts';
import { launchSigner, PRIVATE_USER } from '../../helpers/telegram-launch.ts';

const USER_ID = 987654321012;
/** a user whose data the owner erases */
const ERASED_USER_ID = 876543210987;
const CLIENT_IP = '203.0.113.77';
const BOT_ID = 7_400_500_600;
const signer = launchSigner();
/** the signed launch data of USER_ID, with every personal field Telegram gives */
const LAUNCH_USER = { ...PRIVATE_USER, id: USER_ID };
const SECRETS = [
  String(USER_ID),
  String(ERASED_USER_ID),
  CLIENT_IP,
  PRIVATE_USER.first_name!,
  PRIVATE_USER.last_name!,
  PRIVATE_USER.username!,
  PRIVATE_USER.photo_url!,
];

const running: ServiceProcess[] = [];
afterAll(async () => {
  for (const service of running) await service.kill();
});

async function ingest(env: Record<string, string>): Promise<string> {
  const service = await startServiceProcess({
    ...env,
    TRUST_PROXY: 'true',
    LOG_LEVEL: 'trace',
    RATE_LIMIT_MAX: '5',
    TELEGRAM_PUBLIC_KEY: signer.publicKeyHex,
  });
  running.push(service);
  const created = await runCliWith(env, [
    'tokens',
    'create',
    '--bot',
    '@privacy_bot',
    '--domain',
    'app.example.com',
    '--app-name',
    'privacy_app',
    '--bot-id',
    String(BOT_ID),
    '--owner',
    String(USER_ID),
    '--json',
  ]);
  expect(created.exitCode, created.stderr).toBe(0);
  const { token } = JSON.parse(created.stdout) as { token: string };
  const headers = { 'x-forwarded-for': CLIENT_IP };
  const initData = signer.sign({ botId: BOT_ID, user: LAUNCH_USER, startParam: 'from_friend' });
  const accepted = [
    makeEvent('privacy_app', { user_id: USER_ID, init_data: initData }),
    makeEvent('privacy_app', { user_id: ERASED_USER_ID }),
    makeEvent('privacy_app', {
      user_id: USER_ID,
      event_name: 'app-hide',
      url_referer: `https://app.example.com/#tgWebAppData=user%3D%7B%22id%22%3A${USER_ID}%7D`,
    }),
  ];
  expect((await postEvents(service.url, accepted, { token, headers })).status).toBe(201);
  // refused requests carrying the launch data: the refusal log keeps nothing of it either
  expect(
    (
      await postEvents(service.url, makeEvent('privacy_app', { user_id: USER_ID, init_data: initData }), {
        token,
        headers,
        origin: 'https://other.example',
      })
    ).status,
  ).toBe(403);
  expect(
    (await postEvents(service.url, makeEvent('privacy_app', { user_id: 'x', init_data: initData }), { token, headers }))
      .status,
  ).toBe(400);
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++)
    statuses.push(
      (await postEvents(service.url, makeEvent('privacy_app', { user_id: USER_ID }), { token, headers })).status,
    );
  expect(statuses).toContain(429); // the rate limit was really hit
  // rejections are written about once a second: wait until the operator sees this one
  const lastRejection = async () =>
    JSON.parse((await runCliWith(env, ['apps', 'show', '--app-name', 'privacy_app', '--json'])).stdout).last_rejection
      ?.status;
  await expect.poll(lastRejection, { timeout: 15_000, interval: 500 }).toBe(429);
  // the launch was really checked, and verified
  const shown = JSON.parse((await runCliWith(env, ['apps', 'show', '--app-name', 'privacy_app', '--json'])).stdout);
  expect(shown.launches_7d.outcomes.verified).toBe(1);
  const erased = await runCliWith(env, [
    ...['users', 'erase', '--app-name', 'privacy_app'],
    ...['--telegram-user-id', String(ERASED_USER_ID), '--json'],
  ]);
  expect(erased.exitCode, erased.stderr).toBe(0);
  expect(JSON.parse(erased.stdout)).toMatchObject({ deleted: { events: 1 }, complete: true });
  expect(await service.stop()).toEqual({ code: 0, signal: null });
  return service.output();
}

async function tableDump(query: (text: string) => Promise<Record<string, unknown>[]>): Promise<string> {
  const tables = await query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`);
  let dump = '';
  for (const { tablename } of tables) {
    const rows = await query(`SELECT row_to_json(t)::text AS row FROM "${tablename as string}" t`);
    dump += rows.map((entry) => entry.row).join('\n');
  }
  expect(dump).toContain('privacy_app'); // the dump really holds the data
  return dump;
}

function expectNothingPrivate(where: string, text: string) {
  for (const secret of SECRETS) expect(text.includes(secret), `${secret} found in ${where}`).toBe(false);
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

const postgresUp = await available('PostgreSQL');

describe('privacy', () => {
  it('embedded store: nothing private in tables, data files or logs', async () => {
    const dataDir = await embeddedDataDir();
    const logs = await ingest({ DATA_DIR: dataDir });
    expect(logs.length).toBeGreaterThan(0);
    expectNothingPrivate('logs', logs);
    for (const file of filesUnder(dataDir)) {
      const bytes = fs.readFileSync(file);
      for (const secret of SECRETS) expect(bytes.includes(secret), `${secret} found in ${file}`).toBe(false);
    }
    const store = await openStore({ dataDir });
    try {
      expectNothingPrivate('tables', await tableDump((text) => store.sql.query(text)));
    } finally {
      await store.close();
    }
  });

  it.runIf(postgresUp)('PostgreSQL and Redis: nothing private in tables, Redis keys or logs', async () => {
    const database = await migratedDatabase();
    const redisUp = await available('Redis');
    const redis = redisUp ? new Redis(REDIS_URL) : undefined;
    try {
      const logs = await ingest({ DATA_DIR: tempDir(), DATABASE_URL: database.url, ...(redisUp ? { REDIS_URL } : {}) });
      expectNothingPrivate('logs', logs);
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        expectNothingPrivate('tables', await tableDump(async (text) => (await client.query(text)).rows));
      } finally {
        await client.end();
      }
      if (redis) {
        const keys = await redis.keys('tma-rl:*');
        expect(keys.length).toBeGreaterThan(0);
        expectNothingPrivate('Redis keys', keys.join('\n'));
      }
    } finally {
      redis?.disconnect();
      await database.drop();
    }
  });
});

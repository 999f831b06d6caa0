// Erasure means gone, scanned byte by byte: a user's events carrying a wallet address, an invoice payload, an error
// text, a referer and their own Telegram id in a start_param, a custom event's name, a property's name and a property's
// value are stored by a real service, erased with the CLI, and afterwards no file of DATA_DIR (the embedded store's
// pgdata with its WAL, the durable log) and, on PostgreSQL after a CHECKPOINT, no file of the database's tables,
// indexes and catalogs (the planner's statistics among them, which ANALYZE fills with sampled values) holds the
// user's key or any of those texts. On PostgreSQL the erase runs while another transaction of the database holds a
// snapshot from before it (a read, a commit, an ANALYZE of another table, as under load): a rewrite beside it would
// copy the deleted rows into the new files.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { Pseudonymiser } from '../../../src/events/request/pseudonym.ts';
import { Secrets } from '../../../src/tokens/secret.ts';
import { runCliWith } from '../../helpers/cli.ts';
import { available } from '../../helpers/environment.ts';
import { makeEvent, postEvents } from '../../helpers/events.ts';
import { startServiceProcess, type ServiceProcess } from '../../helpers/service-process.ts';
import { tempDir } from '../../helpers/service.ts';
import { embeddedDataDir, migratedDatabase } from '../../helpers/stores.ts';

const SECRET = 'erasure-test-secret-erasure-test-secret';
const OWNER_ID = 111222333;
const KEPT_USER_ID = 222333444;
const ERASED_USER_ID = 987654321;
const ID = String(ERASED_USER_ID);
const WALLET = 'UQErasedWalletAddress0123456789abcdefERASED';
const INVOICE = 'invoice-of-the-erased-user-7f3a9c';
const ERROR_TEXT = 'wallet-declined-for-the-erased-user-5e1d';
const REFERER = 'https://app.example.com/erased-user-page-2c4b/';
/** the erased user's events: a launch, a wallet connected, a connection failed, two custom events, a payment */
const ERASED_EVENTS = 6;

const running: ServiceProcess[] = [];
afterAll(async () => {
  for (const service of running) await service.kill();
});

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

const userKeyOf = (appId: number) => new Pseudonymiser(new Secrets(Buffer.from(SECRET))).userKey(appId, ID);

/**
 * what would give the user away: the raw id (also in their start_param, custom event name, property name and value),
 * wallet, payload, error text, referer, and their key as stored
 */
function needles(appId: number): [string, Buffer][] {
  const key = userKeyOf(appId);
  return [
    ['raw id', Buffer.from(ID)],
    ['start_param', Buffer.from(`ref${ID}`)],
    ['custom event name', Buffer.from(`profile_${ID}`)],
    ['property name', Buffer.from(`id_${ID}`)],
    ['wallet address', Buffer.from(WALLET)],
    ['invoice payload', Buffer.from(INVOICE)],
    ['error text', Buffer.from(ERROR_TEXT)],
    ['referer', Buffer.from(REFERER)],
    ['user key', key],
    ['user key (hex)', Buffer.from(key.toString('hex'))],
    ['user key (base64)', Buffer.from(key.toString('base64'))],
  ];
}

function found(files: string[], appId: number): string[] {
  const hits: string[] = [];
  for (const file of files) {
    const bytes = fs.readFileSync(file);
    for (const [what, needle] of needles(appId)) if (bytes.includes(needle)) hits.push(`${what} in ${file}`);
  }
  return hits;
}

/** stores the erased user's events and a kept user's through a running service */
async function storeEvents(env: Record<string, string>, service: ServiceProcess): Promise<void> {
  const cli = async (...argv: string[]) => {
    const result = await runCliWith(env, [...argv, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    return JSON.parse(result.stdout) as Record<string, string>;
  };
  const { token } = await cli(
    ...['tokens', 'create', '--bot', '@erase_bot', '--domain', 'app.example.com', '--app-name', 'erase_app'],
    ...['--owner', String(OWNER_ID)],
  );
  const { key: serverKey } = await cli('server-keys', 'create', '--app-name', 'erase_app');
  const session = crypto.randomUUID();
  const erased = { user_id: ERASED_USER_ID, session_id: session, start_param: `ref${ID}`, url_referer: REFERER };
  const erasedEvents = [
    makeEvent('erase_app', erased),
    makeEvent('erase_app', {
      ...erased,
      event_name: 'connection-completed',
      is_success: true,
      wallet_address: WALLET,
    }),
    makeEvent('erase_app', { ...erased, event_name: 'connection-error', error_message: ERROR_TEXT }),
    makeEvent('erase_app', {
      ...erased,
      event_name: 'custom-event',
      custom_data: { name: 'profile', telegram_id: ID, plan: 'pro' },
    }),
    makeEvent('erase_app', {
      ...erased,
      event_name: 'custom-event',
      custom_data: { name: `profile_${ID}`, [`id_${ID}`]: 'yes', plan: 'pro' },
    }),
  ];
  const keptEvents = [
    makeEvent('erase_app', { user_id: KEPT_USER_ID }),
    makeEvent('erase_app', {
      user_id: KEPT_USER_ID,
      event_name: 'custom-event',
      custom_data: { name: 'profile', telegram_id: String(KEPT_USER_ID), plan: 'pro' },
    }),
  ];
  expect((await postEvents(service.url, [...erasedEvents, ...keptEvents], { token })).status).toBe(201);
  const payment = makeEvent('erase_app', {
    user_id: ERASED_USER_ID,
    event_name: 'successful-payment',
    custom_data: { amount: 50, currency: 'XTR', invoice_payload: INVOICE },
  });
  const paid = await postEvents(service.url, payment, {
    origin: null,
    headers: { authorization: `Bearer ${serverKey}` },
  });
  expect(paid.status, paid.text).toBe(201);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const ERASE = ['users', 'erase', '--app-name', 'erase_app', '--telegram-user-id', ID, '--json'];

/** erases the user once all their events are stored (the loader stores them within a second or so) */
async function eraseAll(env: Record<string, string>): Promise<void> {
  let erased = 0;
  for (let attempt = 0; attempt < 20 && erased < ERASED_EVENTS; attempt++) {
    if (attempt > 0) await sleep(500);
    const result = await runCliWith(env, ERASE);
    expect(result.exitCode, result.stderr).toBe(0);
    erased += (JSON.parse(result.stdout) as { deleted: { events: number } }).deleted.events;
  }
  expect(erased).toBe(ERASED_EVENTS);
}

/**
 * On a server store, once every event of the user is stored and the tables analysed (as the service's maintenance or
 * an autovacuum does after commits, so the statistics hold the user's values): one erase while another session of the
 * database holds a snapshot taken before it. The snapshot ends once the erase is seen waiting for it, or once the
 * erase is over (a rewrite that does not wait has then copied every deleted row it could see into its new file).
 */
async function eraseBesideAnOlderSnapshot(env: Record<string, string>): Promise<void> {
  const [watcher, holder] = [env, env].map(() => new pg.Client({ connectionString: env.DATABASE_URL }));
  await Promise.all([watcher!.connect(), holder!.connect()]);
  try {
    const appId = (await watcher!.query<{ id: number }>(`SELECT id FROM apps WHERE app_name = 'erase_app'`)).rows[0]!
      .id;
    const stored = async () =>
      (
        await watcher!.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM events WHERE app_id = $1 AND user_key = decode($2, 'base64')`,
          [appId, userKeyOf(appId).toString('base64')],
        )
      ).rows[0]!.n;
    for (let waited = 0; (await stored()) < ERASED_EVENTS; waited += 200) {
      expect(waited).toBeLessThan(60_000);
      await sleep(200);
    }
    await watcher!.query('ANALYZE');
    await holder!.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await holder!.query('SELECT 1');
    const holderPid = (await holder!.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    let over = false;
    const erasing = runCliWith(env, ERASE).finally(() => (over = true));
    // the erase's look at the database's older snapshots (src/db/older-snapshots.ts), its last statement shown
    const seenWaiting = async () =>
      (
        await watcher!.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND pid NOT IN (pg_backend_pid(), $1) AND query LIKE '%age(backend_xmin)%'`,
          [holderPid],
        )
      ).rows[0]!.n > 0;
    while (!over && !(await seenWaiting())) await sleep(20);
    await holder!.query('COMMIT');
    const result = await erasing;
    expect(result.exitCode, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { deleted: { events: number } }).deleted.events).toBe(ERASED_EVENTS);
  } finally {
    await Promise.all([watcher!.end(), holder!.end()]);
  }
}

async function runService(env: Record<string, string>, erase: () => Promise<void>): Promise<void> {
  const service = await startServiceProcess(env);
  running.push(service);
  await storeEvents(env, service);
  await erase();
  // an erase run by the CLI outside the service's process (a server store) reaches the service's log within seconds; the
  // scan after the stop says what is left when it does not
  // (each erase of eraseAll may be compacted on its own: the wait is over when no record of the user is left, the
  // request with their events and the payment alike)
  const log = path.join(env.DATA_DIR!, 'log', 'data.mdb');
  const markers = [ID, WALLET, INVOICE];
  const holdsUser = () => {
    const bytes = fs.readFileSync(log);
    return markers.some((marker) => bytes.includes(marker));
  };
  for (let waited = 0; waited < 30_000 && holdsUser(); waited += 500) await sleep(500);
  expect(await service.stop(), service.output()).toEqual({ code: 0, signal: null });
}

const postgresUp = await available('PostgreSQL');

describe('an erased user leaves nothing in the files', () => {
  it('embedded store: no file of DATA_DIR (pgdata, its WAL, the durable log) holds the user', async () => {
    const dataDir = await embeddedDataDir();
    const env = { DATA_DIR: dataDir, SECRET };
    await runService(env, () => eraseAll(env));
    const files = filesUnder(dataDir);
    expect(files.some((file) => file.includes(`${path.sep}pg_wal${path.sep}`))).toBe(true);
    expect(files.some((file) => file.endsWith(`log${path.sep}data.mdb`))).toBe(true);
    // the app is the store's first
    expect(found(files, 1)).toEqual([]);
  });

  it.runIf(postgresUp)(
    'PostgreSQL: no file of DATA_DIR and no file of the tables, indexes and catalogs holds the user, though a snapshot older than the erase was open',
    async () => {
      const database = await migratedDatabase();
      try {
        const dataDir = tempDir();
        const env = { DATA_DIR: dataDir, DATABASE_URL: database.url, SECRET };
        await runService(env, () => eraseBesideAnOlderSnapshot(env));
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        let relationFiles: string[];
        let statistics: string;
        let appId: number;
        try {
          // what the server still holds in memory is written to the files first
          await client.query('CHECKPOINT');
          appId = (await client.query<{ id: number }>(`SELECT id FROM apps WHERE app_name = 'erase_app'`)).rows[0]!.id;
          const [{ dir }] = (await client.query<{ dir: string }>(`SELECT current_setting('data_directory') AS dir`))
            .rows as [{ dir: string }];
          const relations = await client.query<{ file: string }>(
            `SELECT pg_relation_filepath(c.oid) AS file FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname IN ('public', 'pg_toast', 'pg_catalog') AND c.relkind IN ('r', 'i', 't')
             AND pg_relation_filepath(c.oid) IS NOT NULL`,
          );
          statistics = path.join(
            dir,
            (await client.query<{ file: string }>(`SELECT pg_relation_filepath('pg_catalog.pg_statistic') AS file`))
              .rows[0]!.file,
          );
          // a relation's file, and its further 1 GB segments
          relationFiles = relations.rows.flatMap(({ file }) => {
            const base = path.join(dir, file);
            return fs.readdirSync(path.dirname(base)).flatMap((name) => {
              const full = path.join(path.dirname(base), name);
              return full === base || full.startsWith(`${base}.`) ? [full] : [];
            });
          });
        } finally {
          await client.end();
        }
        expect(relationFiles.length).toBeGreaterThan(20);
        expect(relationFiles).toContain(statistics);
        expect(found([...filesUnder(dataDir), ...relationFiles], appId)).toEqual([]);
      } finally {
        await database.drop();
      }
    },
  );
});

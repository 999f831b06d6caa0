// Erasure means gone, scanned byte by byte: a user's events carrying a wallet address, an invoice payload and their
// own Telegram id as a custom property value are stored by a real service, erased with the CLI, and afterwards no
// file of DATA_DIR (the embedded store's pgdata with its WAL, the durable log) and, on PostgreSQL, no file of the
// database's tables and indexes holds the user's key, raw id, wallet address, invoice payload or property value.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { Pseudonymiser } from '../../../src/events/request/pseudonym.ts';
import { Secrets } from '../../../src/secret.ts';
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
const WALLET = 'UQErasedWalletAddress0123456789abcdefERASED';
const INVOICE = 'invoice-of-the-erased-user-7f3a9c';

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

/** what would give the user away: the raw id (also their property value), wallet, payload, and their key as stored */
function needles(appId: number): [string, Buffer][] {
  const key = new Pseudonymiser(new Secrets(Buffer.from(SECRET))).userKey(appId, String(ERASED_USER_ID));
  return [
    ['raw id', Buffer.from(String(ERASED_USER_ID))],
    ['wallet address', Buffer.from(WALLET)],
    ['invoice payload', Buffer.from(INVOICE)],
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
  const erasedEvents = [
    makeEvent('erase_app', { user_id: ERASED_USER_ID, session_id: session }),
    makeEvent('erase_app', {
      user_id: ERASED_USER_ID,
      session_id: session,
      event_name: 'connection-completed',
      is_success: true,
      wallet_address: WALLET,
    }),
    makeEvent('erase_app', {
      user_id: ERASED_USER_ID,
      session_id: session,
      event_name: 'custom-event',
      custom_data: { name: 'profile', telegram_id: String(ERASED_USER_ID), plan: 'pro' },
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

/** erases the user once all four of their events are stored (the loader stores them within a second or so) */
async function eraseAll(env: Record<string, string>): Promise<void> {
  let erased = 0;
  for (let attempt = 0; attempt < 20 && erased < 4; attempt++) {
    if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 500));
    const result = await runCliWith(env, [
      ...['users', 'erase', '--app-name', 'erase_app', '--telegram-user-id', String(ERASED_USER_ID), '--json'],
    ]);
    expect(result.exitCode, result.stderr).toBe(0);
    erased += (JSON.parse(result.stdout) as { deleted: { events: number } }).deleted.events;
  }
  expect(erased).toBe(4);
}

async function runService(env: Record<string, string>): Promise<void> {
  const service = await startServiceProcess(env);
  running.push(service);
  await storeEvents(env, service);
  await eraseAll(env);
  // an erase run by the CLI outside the service's process (a server store) reaches the service's log within seconds; the
  // scan after the stop says what is left when it does not
  // (each erase of eraseAll may be compacted on its own: the wait is over when no record of the user is left, the
  // request with their events and the payment alike)
  const log = path.join(env.DATA_DIR!, 'log', 'data.mdb');
  const markers = [String(ERASED_USER_ID), WALLET, INVOICE];
  const holdsUser = () => {
    const bytes = fs.readFileSync(log);
    return markers.some((marker) => bytes.includes(marker));
  };
  for (let waited = 0; waited < 30_000 && holdsUser(); waited += 500)
    await new Promise((resolve) => setTimeout(resolve, 500));
  expect(await service.stop(), service.output()).toEqual({ code: 0, signal: null });
}

const postgresUp = await available('PostgreSQL');

describe('an erased user leaves nothing in the files', () => {
  it('embedded store: no file of DATA_DIR (pgdata, its WAL, the durable log) holds the user', async () => {
    const dataDir = await embeddedDataDir();
    await runService({ DATA_DIR: dataDir, SECRET });
    const files = filesUnder(dataDir);
    expect(files.some((file) => file.includes(`${path.sep}pg_wal${path.sep}`))).toBe(true);
    expect(files.some((file) => file.endsWith(`log${path.sep}data.mdb`))).toBe(true);
    // the app is the store's first
    expect(found(files, 1)).toEqual([]);
  });

  it.runIf(postgresUp)(
    'PostgreSQL: no file of DATA_DIR and no file of the tables and indexes holds the user',
    async () => {
      const database = await migratedDatabase();
      try {
        const dataDir = tempDir();
        await runService({ DATA_DIR: dataDir, DATABASE_URL: database.url, SECRET });
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        let relationFiles: string[];
        let appId: number;
        try {
          // what the server still holds in memory is written to the files first
          await client.query('CHECKPOINT');
          appId = (await client.query<{ id: number }>(`SELECT id FROM apps WHERE app_name = 'erase_app'`)).rows[0]!.id;
          const [{ dir }] = (await client.query<{ dir: string }>(`SELECT current_setting('data_directory') AS dir`))
            .rows as [{ dir: string }];
          const relations = await client.query<{ file: string }>(
            `SELECT pg_relation_filepath(c.oid) AS file FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname IN ('public', 'pg_toast') AND c.relkind IN ('r', 'i', 't')
             AND pg_relation_filepath(c.oid) IS NOT NULL`,
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
        expect(found([...filesUnder(dataDir), ...relationFiles], appId)).toEqual([]);
      } finally {
        await database.drop();
      }
    },
  );
});

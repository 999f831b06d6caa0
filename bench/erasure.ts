// Erasure bench: what making an erased user's bytes leave the files costs on a lived-in app. Stores N events of U
// users over D days (app-inits, wallet connections and custom events with properties, through the event plane's own
// insert) on each store, then per store times
//   - the erase alone (eraseUser: the user's rows deleted),
//   - the baseline: VACUUM (ANALYZE) of the tables an erase touches (what the purges run on the embedded store),
//   - the scrub after an erase (scrubDeletedRows: VACUUM FULL and ANALYZE of those tables, and on the embedded
//     store its statistics and two WAL switches with checkpoints),
// each after erasing another user, and prints the scrub's ratio to the baseline and the tables' sizes. Then the
// durable log's compaction with R records of 1 KB waiting.
//
//   node --import tsx bench/erasure.ts [--events 150000] [--users 20000] [--days 89] [--log-records 20000]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { scrubDeletedRows } from '../src/db/scrub.ts';
import { openStore, type Store } from '../src/db/store.ts';
import { Pseudonymiser } from '../src/events/request/pseudonym.ts';
import { SqlEventPlane, type EventRow } from '../src/events/write/event-plane.ts';
import { ERASED_TABLES, eraseUser } from '../src/events/lifecycle/user-erasure.ts';
import { DurableLog } from '../src/log/durable-log.ts';
import { Secrets } from '../src/tokens/secret.ts';
import { available } from '../test/helpers/environment.ts';
import { createTestDatabase } from '../test/helpers/postgres.ts';
import { parseArgs, round } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const EVENTS = Number(args.get('events') ?? 150_000);
const USERS = Number(args.get('users') ?? 20_000);
const DAYS = Number(args.get('days') ?? 89);
const LOG_RECORDS = Number(args.get('log-records') ?? 20_000);
const BATCH = 5_000;

const log = (message: string) => console.error(`[bench erasure ${new Date().toISOString().slice(11, 19)}] ${message}`);

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return (performance.now() - started) / 1000;
}

const pseudonymiser = new Pseudonymiser(new Secrets(Buffer.from('bench-erasure-secret-bench-erasure-secret')));
const userKey = (appId: number, user: number) => pseudonymiser.userKey(appId, String(1_000_000 + user));

/** the i-th event: users and days spread evenly, in time order as they would arrive */
function eventOf(appId: number, i: number, start: number): EventRow {
  const at = new Date(start + Math.floor((i / EVENTS) * DAYS * 86_400_000));
  const user = (i * 7919) % USERS;
  const kind = i % 5;
  const key = crypto.randomBytes(16);
  key.writeUIntBE(at.getTime(), 0, 6);
  return {
    appId,
    eventKey: key,
    receivedAt: at,
    occurredAt: at,
    day: at.toISOString().slice(0, 10),
    eventName: kind === 0 ? 'connection-completed' : kind === 1 ? 'custom-event' : 'app-init',
    sessionId: crypto.randomUUID(),
    userKey: userKey(appId, user),
    isPremium: false,
    isSuccess: kind === 0,
    platform: 'ios',
    locale: 'en',
    startParam: null,
    props:
      kind === 0
        ? { wallet_address: `UQ${user.toString(16).padStart(46, '0')}` }
        : kind === 1
          ? { custom_data: { name: 'profile', telegram_id: String(1_000_000 + user), plan: `plan${user % 3}` } }
          : {},
  };
}

async function seed(store: Store): Promise<number> {
  const [app] = await store.sql.query<{ id: number }>(
    `INSERT INTO apps (app_name, bot, domains, updated_at) VALUES ('bench_erase', '@bench_bot', '{}', now()) RETURNING id`,
  );
  const appId = app!.id;
  const events = new SqlEventPlane(store.sql);
  const start = Date.now() - DAYS * 86_400_000;
  for (let from = 0; from < EVENTS; from += BATCH) {
    const rows = Array.from({ length: Math.min(BATCH, EVENTS - from) }, (_, i) => eventOf(appId, from + i, start));
    await events.insert(rows);
  }
  return appId;
}

async function sizes(store: Store): Promise<string> {
  const rows = await store.sql.query<{ name: string; mb: number }>(
    `SELECT relname AS name, round(pg_total_relation_size(oid) / 1048576.0, 1)::float8 AS mb FROM pg_class
     WHERE relname = ANY($1) ORDER BY 2 DESC`,
    [[...ERASED_TABLES]],
  );
  return rows.map((row) => `${row.name} ${row.mb} MB`).join(', ');
}

async function benchStore(name: string, place: { dataDir: string; databaseUrl?: string }) {
  const store = await openStore(place);
  try {
    log(`${name}: storing ${EVENTS} events of ${USERS} users over ${DAYS} days`);
    const seeding = performance.now();
    const appId = await seed(store);
    log(`${name}: stored in ${round((performance.now() - seeding) / 1000, 1)} s; ${await sizes(store)}`);
    // statistics and visibility as a lived-in store has them
    await scrubDeletedRows(store.sql, ERASED_TABLES);
    const erase = await timed(() => eraseUser(store.sql, appId, userKey(appId, 1)));
    const vacuum = await timed(async () => {
      for (const table of ERASED_TABLES) await store.sql.query(`VACUUM (ANALYZE) ${table}`);
    });
    await eraseUser(store.sql, appId, userKey(appId, 2));
    const scrub = await timed(() => scrubDeletedRows(store.sql, ERASED_TABLES));
    const after = await sizes(store);
    console.log(
      `| ${name} | ${EVENTS} / ${USERS} / ${DAYS} | ${round(erase, 2)} s | ${round(vacuum, 2)} s | ${round(scrub, 2)} s | ${round(scrub / vacuum, 1)}× | ${after} |`,
    );
  } finally {
    await store.close();
  }
}

async function benchLog() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-erasure-log-'));
  const durable = await DurableLog.open(dir, { minFreeBytes: 0 });
  try {
    const record = crypto.randomBytes(1024);
    const seqs = await Promise.all(Array.from({ length: LOG_RECORDS * 2 }, () => durable.append(record)));
    await durable.release(seqs[LOG_RECORDS - 1]!);
    const fileMb = fs.statSync(path.join(dir, 'data.mdb')).size / 1048576;
    const compact = await timed(() => durable.compact());
    const afterMb = fs.statSync(path.join(dir, 'data.mdb')).size / 1048576;
    console.log(
      `| durable log compaction | ${LOG_RECORDS} records of 1 KB waiting, ${LOG_RECORDS} released | ${round(compact, 2)} s | file ${round(fileMb, 1)} → ${round(afterMb, 1)} MB |`,
    );
  } finally {
    await durable.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  '| Store | Events / users / days | Erase | VACUUM (ANALYZE) (baseline) | Scrub (VACUUM FULL …) | Ratio | Sizes after |',
);
console.log('|---|---|---|---|---|---|---|');
await benchStore('embedded PGlite', { dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-erasure-')) });
if (await available('PostgreSQL')) {
  const database = await createTestDatabase();
  try {
    await benchStore('PostgreSQL', {
      dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-erasure-')),
      databaseUrl: database.url,
    });
  } finally {
    await database.drop();
  }
}
await benchLog();

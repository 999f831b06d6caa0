// Migrations that rewrite stored rows, run against rows in the shape the previous migrations left, on both engines.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations, MIGRATIONS_DIR } from '../../src/db/migrate.ts';
import type { SqlRunner } from '../../src/db/sql.ts';
import { chunksOf, encodeRequestPostings, entryBytes } from '../../src/events/write/funnel-posting-format.ts';
import { BatchPostings } from '../../src/events/write/batch-postings.ts';
import { JsonTuple } from '../../src/db/json-tuples.ts';
import { EVENT_COLUMNS, encodeEventRow } from '../../src/events/write/event-columns.ts';
import { eventRow } from '../helpers/events.ts';
import { tempDir } from '../helpers/service.ts';
import { BARE_BACKEND } from '../helpers/stores.ts';

/** a folder holding the committed migrations that come before `name` */
function migrationsBefore(name: string): string {
  const dir = tempDir('tma-migrations-');
  for (const earlier of fs.readdirSync(MIGRATIONS_DIR).filter((entry) => !entry.endsWith('.toml') && entry < name)) {
    fs.cpSync(path.join(MIGRATIONS_DIR, earlier), path.join(dir, earlier), { recursive: true });
  }
  return dir;
}

describe(`migrations on ${BARE_BACKEND.name}`, () => {
  let sql: SqlRunner;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ sql, cleanup } = await BARE_BACKEND.open());
  });
  afterAll(() => cleanup?.());

  it('counts each stored session once, on its first day, and takes its later days out of the counts', async () => {
    const migration = '20261123040000_sessions_on_their_first_day';
    await applyMigrations(sql, migrationsBefore(migration));
    const [crossing, single] = ['0a927a1d-6036-4e04-9d40-26e041d4026e', '1b927a1d-6036-4e04-9d40-26e041d4026f'];
    // before: `crossing` was counted on the 20th and again on the 21st
    await sql.query(
      `INSERT INTO daily_sessions (app_id, day, session_id, platform, locale, start_param) VALUES
         (1, '2026-11-20', $1, 'ios', 'en', ''), (1, '2026-11-21', $1, 'ios', 'en', ''), (1, '2026-11-21', $2, 'android', 'en', '')`,
      [crossing, single],
    );
    await sql.query(
      `INSERT INTO daily_app_stats (app_id, day, users, sessions) VALUES (1, '2026-11-20', 1, 1), (1, '2026-11-21', 2, 2)`,
    );
    await sql.query(
      `INSERT INTO daily_dimensions (app_id, day, dimension, value, sessions) VALUES
         (1, '2026-11-20', 'platform', 'ios', 1), (1, '2026-11-20', 'locale', 'en', 1), (1, '2026-11-20', 'start_param', '', 1),
         (1, '2026-11-21', 'platform', 'ios', 1), (1, '2026-11-21', 'platform', 'android', 1),
         (1, '2026-11-21', 'locale', 'en', 2), (1, '2026-11-21', 'start_param', '', 2)`,
    );

    // this migration first, then any that came after it
    expect((await applyMigrations(sql))[0]).toBe(migration);

    expect(await sql.query(`SELECT day::text, session_id::text FROM daily_sessions ORDER BY day`)).toEqual([
      { day: '2026-11-20', session_id: crossing },
      { day: '2026-11-21', session_id: single },
    ]);
    expect(await sql.query(`SELECT day::text, users, sessions FROM daily_app_stats ORDER BY day`)).toEqual([
      { day: '2026-11-20', users: 1, sessions: 1 },
      { day: '2026-11-21', users: 2, sessions: 1 },
    ]);
    expect(
      await sql.query(
        `SELECT day::text, dimension, value, sessions::int FROM daily_dimensions ORDER BY day, dimension, value`,
      ),
    ).toEqual([
      { day: '2026-11-20', dimension: 'locale', value: 'en', sessions: 1 },
      { day: '2026-11-20', dimension: 'platform', value: 'ios', sessions: 1 },
      { day: '2026-11-20', dimension: 'start_param', value: '', sessions: 1 },
      { day: '2026-11-21', dimension: 'locale', value: 'en', sessions: 1 },
      { day: '2026-11-21', dimension: 'platform', value: 'android', sessions: 1 },
      { day: '2026-11-21', dimension: 'start_param', value: '', sessions: 1 },
    ]);
    // from now on a session has one row, whatever the day it is seen again
    const again = await sql.query(
      `INSERT INTO daily_sessions (app_id, day, session_id) VALUES (1, '2026-11-22', $1) ON CONFLICT DO NOTHING RETURNING 1`,
      [crossing],
    );
    expect(again).toEqual([]);
  });
});

describe(`the insights migration on ${BARE_BACKEND.name}`, () => {
  let sql: SqlRunner;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ sql, cleanup } = await BARE_BACKEND.open());
  });
  afterAll(() => cleanup?.());

  it('gives stored users their first day, and counts stored wallet connections and custom events', async () => {
    const migration = '20261124160000_insights';
    await applyMigrations(sql, migrationsBefore(migration));
    const [u1, u2] = [Buffer.from([1]), Buffer.from([2])];
    await sql.query(
      `INSERT INTO daily_users (app_id, day, user_key) VALUES
         (1, '2026-11-20', $1), (1, '2026-11-22', $1), (1, '2026-11-21', $2)`,
      [u1, u2],
    );
    await sql.query(
      `INSERT INTO app_users (app_id, user_key, last_day) VALUES (1, $1, '2026-11-22'), (1, $2, '2026-11-21')`,
      [u1, u2],
    );
    const session = '0a927a1d-6036-4e04-9d40-26e041d4026e';
    const stored = [
      [u1, '2026-11-20', 'connection-completed', {}],
      [u1, '2026-11-21', 'connection-completed', {}],
      [u1, '2026-11-20', 'custom-event', { custom_data: { name: 'buy', sku: 'gold' } }],
      [u2, '2026-11-21', 'custom-event', { custom_data: { name: 'buy', sku: 'gold', nested: { a: 1 } } }],
      [u2, '2026-11-21', 'custom-event', { custom_data: { sku: 'silver' } }],
    ] as const;
    for (const [i, [user, day, name, props]] of stored.entries()) {
      await sql.query(
        `INSERT INTO events (app_id, event_key, received_at, occurred_at, day, event_name, session_id, user_key,
                             is_premium, is_success, props)
         VALUES (1, $1, $2::date, $2::date, $2::date, $3, $4, $5, false, false, $6::jsonb)`,
        [Buffer.from([i]), day, name, session, user, JSON.stringify(props)],
      );
    }

    expect((await applyMigrations(sql))[0]).toBe(migration);

    expect(
      await sql.query(`SELECT encode(user_key, 'hex') AS user, first_day::text FROM app_users ORDER BY 1`),
    ).toEqual([
      { user: '01', first_day: '2026-11-20' },
      { user: '02', first_day: '2026-11-21' },
    ]);
    expect(await sql.query(`SELECT encode(user_key, 'hex') AS user, first_day::text FROM wallet_users`)).toEqual([
      { user: '01', first_day: '2026-11-20' },
    ]);
    expect(await sql.query(`SELECT day::text, name, events::int FROM daily_custom_events ORDER BY day, name`)).toEqual([
      { day: '2026-11-20', name: 'buy', events: 1 },
      { day: '2026-11-21', name: '(no name)', events: 1 },
      { day: '2026-11-21', name: 'buy', events: 1 },
    ]);
    // each user's custom event names of a day, as the bits of their day (migration 20261125000000_custom_name_bits)
    expect(
      await sql.query(
        `SELECT encode(d.user_key, 'hex') AS user, d.day::text, array_agg(c.name ORDER BY c.name) AS names
         FROM daily_users d JOIN custom_catalog c ON c.app_id = d.app_id AND c.level = 0 AND get_bit(d.custom_names, c.slot) = 1
         GROUP BY 1, 2 ORDER BY 1, 2`,
      ),
    ).toEqual([
      { user: '01', day: '2026-11-20', names: ['buy'] },
      { user: '02', day: '2026-11-21', names: ['(no name)', 'buy'] },
    ]);
    expect(await sql.query(`SELECT slot FROM custom_catalog WHERE level = 3`)).toEqual([{ slot: 2 }]);
    // scalar values only: the nested object is not a value
    expect(
      await sql.query(`SELECT day::text, name, property, value, events::int FROM daily_custom_values ORDER BY 1, 2, 4`),
    ).toEqual([
      { day: '2026-11-20', name: 'buy', property: 'sku', value: 'gold', events: 1 },
      { day: '2026-11-21', name: '(no name)', property: 'sku', value: 'silver', events: 1 },
      { day: '2026-11-21', name: 'buy', property: 'sku', value: 'gold', events: 1 },
    ]);
  });
});

describe(`the funnel postings migration on ${BARE_BACKEND.name}`, () => {
  let sql: SqlRunner;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ sql, cleanup } = await BARE_BACKEND.open());
  });
  afterAll(() => cleanup?.());

  /** each entry of postings rows as one line: app, step, day, the chunk's attributes, user and session, the entry */
  function entryLines(rows: { app_id: number; step: string; day: string; entries: Buffer }[]): string[] {
    const lines: string[] = [];
    for (const { app_id, step, day, entries } of rows)
      for (const chunk of chunksOf(entries))
        for (let index = 0; index < chunk.count; index++)
          lines.push(
            [
              app_id,
              step,
              day,
              JSON.stringify(chunk.attributes),
              entries.subarray(chunk.userAt, chunk.userAt + 16).toString('hex'),
              entries.subarray(chunk.sessionAt, chunk.sessionAt + 16).toString('hex'),
              entryBytes(entries, chunk, index).toString('hex'),
            ].join(' '),
          );
    return lines.sort();
  }

  it("makes the stored events' postings in the bytes the service writes, and drops the events index they replace", async () => {
    const migration = '20261125180000_funnel_postings';
    await applyMigrations(sql, migrationsBefore(migration));
    const long = `${'é'.repeat(60)}😀😀😀😀😀`;
    const rows = [
      eventRow(1, { occurredAt: new Date('2026-11-20T00:00:00.000Z') }),
      eventRow(1, { occurredAt: new Date('2026-11-20T23:59:59.999Z'), eventName: 'app-hide', platform: null }),
      eventRow(1, { occurredAt: new Date('2026-11-21T10:00:00.123Z'), isPremium: true, startParam: 'promo' }),
      eventRow(1, {
        occurredAt: new Date('2026-11-21T10:00:01Z'),
        eventName: 'custom-event',
        locale: null,
        props: { custom_data: { name: long, sku: 'gold' } },
      }),
      eventRow(1, { occurredAt: new Date('2026-11-21T10:00:02Z'), eventName: 'custom-event', props: {} }),
      eventRow(2, {
        occurredAt: new Date('2026-11-21T10:00:03Z'),
        eventName: 'custom-event',
        platform: long,
        props: { custom_data: { name: 7 } },
      }),
    ];
    // the events table's columns before the launch checks came
    const columns = EVENT_COLUMNS.slice(
      0,
      EVENT_COLUMNS.findIndex((column) => column.name === 'launch_check'),
    );
    const names = columns.map((column) => column.name).join(', ');
    for (const row of rows)
      await sql.query(
        `INSERT INTO events (${names}) SELECT ${new JsonTuple(columns).select('r')} FROM (SELECT $1::jsonb AS r) AS row`,
        [JSON.stringify(encodeEventRow(row))],
      );

    expect((await applyMigrations(sql))[0]).toBe(migration);

    const stored = await sql.query<{ app_id: number; step: string; day: string; entries: Uint8Array }>(
      `SELECT app_id, step, day::text AS day, entries FROM funnel_postings`,
    );
    const written = new BatchPostings();
    for (const appId of [1, 2]) written.add(appId, encodeRequestPostings(rows.filter((row) => row.appId === appId)));
    const { groups, entries } = written.toParams();
    const expected = (JSON.parse(groups) as [number, string, string, number, number][]).map(
      ([app_id, step, day, start, length]) => ({ app_id, step, day, entries: entries.subarray(start, start + length) }),
    );
    const actual = stored.map((row) => ({ ...row, entries: Buffer.from(row.entries) }));
    expect(entryLines(actual)).toEqual(entryLines(expected));
    expect(entryLines(actual)).toHaveLength(rows.length);
    expect(actual.map((row) => row.step).sort()).toEqual([
      'app-hide',
      'app-init',
      'app-init',
      'custom-event:(no name)',
      'custom-event:(no name)',
      `custom-event:${'é'.repeat(60)}😀😀😀😀`,
    ]);
    expect(await sql.query(`SELECT indexname FROM pg_indexes WHERE tablename = 'events' ORDER BY 1`)).toEqual([
      { indexname: 'events_app_id_invoice_slug_idx' },
      { indexname: 'events_app_id_payment_day_idx' },
      { indexname: 'events_app_id_received_at_idx' },
      { indexname: 'events_pkey' },
    ]);
  });
});

describe(`the key makers migration on ${BARE_BACKEND.name}`, () => {
  let sql: SqlRunner;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ sql, cleanup } = await BARE_BACKEND.open());
  });
  afterAll(() => cleanup?.());

  it('gives stored keys and links the maker their audit entry names, the operator for the CLI, else unknown', async () => {
    const migration = '20261127000000_key_makers';
    await applyMigrations(sql, migrationsBefore(migration));
    await sql.query(
      `INSERT INTO apps (id, app_name, bot, domains, owner_key, updated_at) VALUES (1, 'made', '@made_bot', '{}', 'OWNERKEY', now())`,
    );
    await sql.query(
      `INSERT INTO read_keys (app_id, hash, prefix) VALUES (1, 'h1', 'tma_read_aaaaaaaa'), (1, 'h2', 'tma_read_bbbbbbbb'), (1, 'h3', 'tma_read_cccccccc')`,
    );
    await sql.query(`INSERT INTO server_keys (app_id, hash, prefix) VALUES (1, 'h4', 'tma_server_dddddddd')`);
    await sql.query(`INSERT INTO share_links (app_id, hash, prefix) VALUES (1, 'h5', 'tma_share_eeeeee')`);
    await sql.query(
      `INSERT INTO audit_log (surface, actor_key, action, app_id, app_name, detail) VALUES
         ('bot', 'MEMBERKEY', 'read_key.create', 1, 'made', '{"prefix": "tma_read_aaaaaaaa"}'),
         ('cli', NULL, 'read_key.create', 1, 'made', '{"prefix": "tma_read_bbbbbbbb"}'),
         ('site', 'MEMBERKEY', 'server_key.create', 1, 'made', '{"prefix": "tma_server_dddddddd"}'),
         ('site', 'OWNERKEY', 'share_link.create', 1, 'made', '{"prefix": "tma_share_eeeeee"}')`,
    );
    await applyMigrations(sql);
    const makers = async (table: string) =>
      (await sql.query<{ created_by: string | null }>(`SELECT created_by FROM ${table} ORDER BY id`)).map(
        (row) => row.created_by,
      );
    expect(await makers('read_keys')).toEqual(['MEMBERKEY', 'operator', null]);
    expect(await makers('server_keys')).toEqual(['MEMBERKEY']);
    expect(await makers('share_links')).toEqual(['OWNERKEY']);
  });
});

// Migrations that rewrite stored rows, run against rows in the shape the previous migrations left, on both engines.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations, MIGRATIONS_DIR } from '../../src/db/migrate.ts';
import type { SqlRunner } from '../../src/db/sql.ts';
import { tempDir } from '../helpers/service.ts';
import { BARE_BACKENDS } from '../helpers/stores.ts';

/** a folder holding the committed migrations that come before `name` */
function migrationsBefore(name: string): string {
  const dir = tempDir('tma-migrations-');
  for (const earlier of fs.readdirSync(MIGRATIONS_DIR).filter((entry) => !entry.endsWith('.toml') && entry < name)) {
    fs.cpSync(path.join(MIGRATIONS_DIR, earlier), path.join(dir, earlier), { recursive: true });
  }
  return dir;
}

describe.each(BARE_BACKENDS)('migrations on $name', ({ open }) => {
  let sql: SqlRunner;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ sql, cleanup } = await open());
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

// Migrations apply in one transaction: a start that fails in the middle of them leaves the store as it found it.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations } from '../../src/db/migrate.ts';
import type { SqlRunner } from '../../src/db/sql.ts';
import { tempDir } from '../helpers/service.ts';
import { BARE_BACKEND } from '../helpers/stores.ts';

/** a folder of migrations, name → script */
function migrations(scripts: Record<string, string>): string {
  const dir = tempDir('tma-migrate-');
  for (const [name, script] of Object.entries(scripts)) {
    fs.mkdirSync(path.join(dir, name));
    fs.writeFileSync(path.join(dir, name, 'migration.sql'), script);
  }
  return dir;
}

const tableExists = async (sql: SqlRunner, name: string) =>
  (await sql.query<{ found: string | null }>(`SELECT to_regclass($1)::text AS found`, [name]))[0]!.found !== null;

describe(`applying migrations on ${BARE_BACKEND.name}`, () => {
  let sql: SqlRunner;
  let cleanup: () => Promise<void>;

  // a fresh embedded store runs initdb, which a shared machine can keep busy for minutes
  beforeAll(async () => {
    ({ sql, cleanup } = await BARE_BACKEND.open());
  }, 300_000);
  afterAll(() => cleanup?.());

  it('applies none of them when one fails, and all of them once it is fixed', async () => {
    const first = { '20260101000000_first': 'CREATE TABLE migrate_first (id int);' };
    const broken = migrations({
      ...first,
      '20260102000000_second': 'CREATE TABLE migrate_second (id int); SELECT * FROM no_such_table;',
    });
    await expect(applyMigrations(sql, broken)).rejects.toThrow(/no_such_table/);
    expect(await tableExists(sql, 'migrate_first')).toBe(false);
    expect(await tableExists(sql, 'migrate_second')).toBe(false);
    expect(await tableExists(sql, '_prisma_migrations')).toBe(false);

    const fixed = migrations({ ...first, '20260102000000_second': 'CREATE TABLE migrate_second (id int);' });
    expect(await applyMigrations(sql, fixed)).toEqual(['20260101000000_first', '20260102000000_second']);
    expect(await tableExists(sql, 'migrate_first')).toBe(true);
    expect(await applyMigrations(sql, fixed)).toEqual([]);
  });
});

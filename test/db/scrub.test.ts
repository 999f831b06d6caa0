// The rewrite after an erase on a PostgreSQL server: the planner's statistics that the erase's ANALYZE replaced (their
// old rows hold sampled values) leave pg_statistic's files where the service's role may rewrite it, and a role that may
// not is told what is left to the operator while its own tables are rewritten all the same; a rewrite waits for the
// transactions older than it, which would keep the deleted rows alive in the new files.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outlastOlderSnapshots } from '../../src/db/older-snapshots.ts';
import { openServerDatabase } from '../../src/db/server.ts';
import { scrubDeletedRows } from '../../src/db/scrub.ts';
import { available } from '../helpers/environment.ts';
import { admin, createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';

const postgresUp = await available('PostgreSQL');

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe.runIf(postgresUp)('the rewrite after an erase on PostgreSQL', () => {
  let database: TestDatabase;
  /** a role that owns its tables but neither the database nor pg_statistic, and is no superuser */
  const role = `tma_scrub_${crypto.randomBytes(4).toString('hex')}`;
  let roleUrl: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    await admin((client) => client.query(`CREATE ROLE ${role} LOGIN`));
    await withClient(database.url, (client) => client.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${role}`));
    const url = new URL(database.url);
    url.username = role;
    roleUrl = url.toString();
  });
  afterAll(async () => {
    await database?.drop();
    await admin((client) => client.query(`DROP ROLE IF EXISTS ${role}`));
  });

  /** a table whose statistics sampled `value`, whose rows of it are then deleted: the erase's part before its rewrite */
  const deletedAfterAnalyse = (url: string, table: string, value: string) =>
    withClient(url, async (client) => {
      await client.query(`CREATE TABLE ${table} (v text)`);
      await client.query(
        `INSERT INTO ${table} SELECT CASE WHEN i % 2 = 0 THEN $1 ELSE 'common' END
                          FROM generate_series(1, 200) i`,
        [value],
      );
      await client.query(`ANALYZE ${table}`);
      await client.query(`DELETE FROM ${table} WHERE v = $1`, [value]);
    });

  /** whether a file of pg_statistic (its table, its TOAST table) holds `value`, after a checkpoint */
  const statisticsHold = (value: string) =>
    withClient(database.url, async (client) => {
      await client.query('CHECKPOINT');
      const { rows } = await client.query<{ dir: string; file: string }>(
        `SELECT current_setting('data_directory') AS dir, pg_relation_filepath(oid) AS file FROM pg_class
         WHERE oid = 'pg_catalog.pg_statistic'::regclass
            OR oid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'pg_catalog.pg_statistic'::regclass)`,
      );
      expect(rows).toHaveLength(2);
      return rows.some(({ dir, file }) => fs.readFileSync(path.join(dir, file)).includes(value));
    });

  const fileOf = (url: string, relation: string) =>
    withClient(url, async (client) => {
      const { rows } = await client.query<{ file: string }>('SELECT pg_relation_filepath($1::regclass) AS file', [
        relation,
      ]);
      return rows[0]!.file;
    });

  it('rewrites the statistics where the role may (a superuser): the replaced ones leave the files', async () => {
    const value = `sampled-by-superuser-${crypto.randomBytes(4).toString('hex')}`;
    await deletedAfterAnalyse(database.url, 'superusers_table', value);
    expect(await statisticsHold(value)).toBe(true);
    const sql = openServerDatabase(database.url);
    try {
      expect(await scrubDeletedRows(sql, ['superusers_table'])).toEqual([]);
    } finally {
      await sql.close();
    }
    expect(await statisticsHold(value)).toBe(false);
  });

  it('says what is left to the operator where the role may not, and rewrites its own tables', async () => {
    const value = `sampled-by-role-${crypto.randomBytes(4).toString('hex')}`;
    await deletedAfterAnalyse(roleUrl, 'roles_table', value);
    const [table, statistics] = [
      await fileOf(roleUrl, 'roles_table'),
      await fileOf(roleUrl, 'pg_catalog.pg_statistic'),
    ];
    const sql = openServerDatabase(roleUrl);
    try {
      expect(await scrubDeletedRows(sql, ['roles_table'])).toEqual([
        "The store's role may not rewrite pg_catalog.pg_statistic: the statistics the erase replaced stay in its dead " +
          "rows until a superuser or the database's owner runs VACUUM FULL pg_catalog.pg_statistic.",
      ]);
    } finally {
      await sql.close();
    }
    expect(await fileOf(roleUrl, 'roles_table')).not.toBe(table);
    expect(await fileOf(roleUrl, 'pg_catalog.pg_statistic')).toBe(statistics);
    // what the operator is told to run removes it
    expect(await statisticsHold(value)).toBe(true);
    await withClient(database.url, (client) => client.query('VACUUM FULL pg_catalog.pg_statistic'));
    expect(await statisticsHold(value)).toBe(false);
  });

  it('waits for the transactions of the database older than it, and for no later one', async () => {
    const sql = openServerDatabase(database.url);
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await holder.query('SELECT 1');
      // the erase's deletes commit after the snapshot was taken (a snapshot with nothing committed since sees no row
      // deleted, and holds nothing back)
      await sql.query('SELECT pg_current_xact_id()');
      expect(await outlastOlderSnapshots(sql, 300)).toBe(false);
      const waiting = outlastOlderSnapshots(sql, 10_000);
      setTimeout(() => void holder.query('COMMIT'), 500);
      const started = Date.now();
      expect(await waiting).toBe(true);
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      // a snapshot taken after the call is not waited for
      const next = outlastOlderSnapshots(sql, 2_000);
      await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await holder.query('SELECT 1');
      expect(await next).toBe(true);
      await holder.query('COMMIT');
    } finally {
      await holder.end();
      await sql.close();
    }
  });
});

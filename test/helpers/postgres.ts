// A fresh PostgreSQL database per suite (empty, or a copy of a template), dropped afterwards.
import crypto from 'node:crypto';
import pg from 'pg';
import type { SqlQueryable } from '../../src/db/sql.ts';
import { POSTGRES_ADMIN_URL } from './environment.ts';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** runs fn on a connection to the server's admin database */
export async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** the URL of a database of the test server */
export function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** an empty database, or a copy of the given template database */
export async function createTestDatabase(options: { template?: string } = {}): Promise<TestDatabase> {
  const name = `tma_test_${crypto.randomBytes(6).toString('hex')}`;
  const template = options.template ? ` TEMPLATE ${options.template}` : '';
  await admin((client) => client.query(`CREATE DATABASE ${name}${template}`));
  return {
    url: databaseUrl(name),
    name,
    drop: () => admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** a checkpoint of the whole server, now (a bench's runs each start from one) */
export async function checkpoint(): Promise<void> {
  await admin((client) => client.query('CHECKPOINT'));
}

/**
 * whether another backend waits for a lock the transaction `holder` holds (a statement queued behind it), asked on
 * another connection, `sql`
 */
export async function someoneWaitsFor(
  sql: Pick<SqlQueryable, 'query'>,
  holder: Pick<SqlQueryable, 'query'>,
): Promise<boolean> {
  const [holding] = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  const [row] = await sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))',
    [holding!.pid],
  );
  return row!.n > 0;
}

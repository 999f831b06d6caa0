// The PostgreSQL pool survives a server that ends a connection while a transaction holds it between two queries
// (a server stopped or restarted): the transaction fails, the process goes on, and the pool serves the next query.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openServerDatabase } from '../../src/db/server.ts';
import { available } from '../helpers/environment.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';

const ready = await available('PostgreSQL');

describe.runIf(ready)('PostgreSQL pool', () => {
  let database: TestDatabase;
  let admin: pg.Client;
  beforeAll(async () => {
    database = await createTestDatabase();
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.end();
    await database?.drop();
  });

  it('a connection ended by the server during a transaction fails that transaction only', async () => {
    const errors: string[] = [];
    const sql = openServerDatabase(database.url, {
      onError: (error) => errors.push((error as { code?: string }).code ?? error.message),
    });
    try {
      const transaction = sql.transaction(async (tx) => {
        const [row] = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        await admin.query('SELECT pg_terminate_backend($1)', [row!.pid]);
        // the server's message arrives while the client is checked out and waits between queries
        await sleep(500);
        await tx.query('SELECT 1');
      });
      await expect(transaction).rejects.toThrow();
      expect(errors).toContain('57P01');
      expect(await sql.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await sql.close();
    }
  });
});

// The PostgreSQL pool survives a server that ends a connection while a transaction holds it between two queries
// (a server stopped or restarted): the transaction fails, the process goes on, and the pool serves the next query.
// The read pool's statements take one server core each: no parallel workers, whatever the plan's costs say.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openServerDatabase, openServerReads } from '../../src/db/server.ts';
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
        await expect
          .poll(() => errors, { timeout: 30_000, message: "the server's message reached the checked-out client" })
          .toContain('57P01');
        await tx.query('SELECT 1');
      });
      await expect(transaction).rejects.toThrow();
      expect(errors).toContain('57P01');
      expect(await sql.query<{ one: number }>('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await sql.close();
    }
  });

  it('plans reads without parallel workers, and leaves the other pools to the server', async () => {
    const sql = openServerDatabase(database.url);
    const reads = openServerReads(database.url, { budgetMs: 5_000, queueLimit: 4, connections: 1 });
    // a plan that would take parallel workers at any size: setup and transfer cost nothing
    const parallelPlan = async (runner: { query: typeof sql.query }) => {
      await runner.query(
        'SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0',
      );
      const plan = await runner.query<{ 'QUERY PLAN': string }>(
        'EXPLAIN SELECT count(*) FROM pg_class a CROSS JOIN pg_class b WHERE a.relpages + b.relpages > 1',
      );
      return plan.map((line) => line['QUERY PLAN']).join('\n');
    };
    try {
      expect(await reads.query('SHOW max_parallel_workers_per_gather')).toEqual([
        { max_parallel_workers_per_gather: '0' },
      ]);
      // the read pool has one connection here, so its settings hold for the next statement
      expect(await parallelPlan(reads)).not.toMatch(/Gather|Parallel/);
      // the same plan on another pool's connection (one transaction: one connection) takes workers
      expect(await sql.transaction((tx) => parallelPlan(tx))).toMatch(/Gather/);
    } finally {
      await reads.close();
      await sql.close();
    }
  });
});

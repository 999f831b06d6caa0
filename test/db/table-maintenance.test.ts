// The service's table maintenance on each store: what a pass does to a table after inserts and deletes, and the pass a
// service makes once it is in service over tables changed while it was stopped.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/db/store.ts';
import { TableMaintenance } from '../../src/db/table-maintenance.ts';
import { createTestDatabase } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/service.ts';
import { killAllChildren, startServiceProcess } from '../helpers/service-process.ts';
import { STORE_BACKEND } from '../helpers/stores.ts';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** a table of the store's schema with `rows` rows, then `deleted` of them deleted */
async function churn(store: Store, rows: number, deleted: number): Promise<void> {
  await store.sql.exec(`CREATE TABLE churn (id int PRIMARY KEY, day date NOT NULL)`);
  await store.sql.query(`INSERT INTO churn SELECT g, DATE '2026-01-01' + (g % 90) FROM generate_series(1, ${rows}) g`);
  await store.sql.query(`DELETE FROM churn WHERE id <= ${deleted}`);
}

const statistics = async (store: Store) =>
  (
    await store.sql.query<{ reltuples: number; columns: number }>(
      `SELECT c.reltuples::float8 AS reltuples,
              (SELECT count(*)::int FROM pg_stats WHERE tablename = 'churn' AND schemaname = current_schema()) AS columns
       FROM pg_class c WHERE c.relname = 'churn' AND c.relnamespace = current_schema()::regnamespace`,
    )
  )[0]!;

describe(`table maintenance (${STORE_BACKEND.name})`, () => {
  it('analyses a changed table and, where no autovacuum runs, vacuums its dead rows; a second pass has nothing to do', async () => {
    const opened = await STORE_BACKEND.open();
    cleanup = opened.cleanup;
    const { store } = opened;
    await churn(store, 5_000, 2_000);
    if (store.kind === 'server') await store.sql.exec(`ALTER TABLE churn SET (autovacuum_enabled = off)`);
    const maintenance = new TableMaintenance(store.sql);
    const done = await maintenance.pass();
    expect(done.find((step) => step.table === 'churn')?.statement).toBe('VACUUM (ANALYZE) "churn"');
    expect(await statistics(store)).toEqual({ reltuples: 3_000, columns: 2 });
    expect((await maintenance.pass()).map((step) => step.table)).not.toContain('churn');
    await maintenance.stop();
  });
});

// a PostgreSQL database of its own (its autovacuum turned off) whatever the project's store: run once, in "postgres"
describe.runIf(STORE_BACKEND.kind === 'server')('a service started on a table changed while it was stopped', () => {
  afterAll(killAllChildren);

  it('analyses and vacuums it once in service, with no commit to prompt it', async () => {
    const database = await createTestDatabase();
    const dataDir = tempDir();
    const store = await openStore({ databaseUrl: database.url, dataDir });
    try {
      await churn(store, 5_000, 2_000);
      await store.sql.exec(`ALTER TABLE churn SET (autovacuum_enabled = off)`);
      const service = await startServiceProcess({ DATABASE_URL: database.url, DATA_DIR: dataDir });
      await expect
        .poll(() => statistics(store), { message: 'the started service maintains the table changed before it' })
        .toEqual({ reltuples: 3_000, columns: 2 });
      await service.stop();
    } finally {
      await store.close();
      await database.drop();
    }
  });
});

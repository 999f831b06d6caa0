// The two stores every store-level suite runs against: embedded PGlite, and PostgreSQL when it answers
// (required in CI). Each open() gives a fresh, migrated store and its cleanup; the bare backends give a
// fresh SQL runner with no migration applied, for tests of the migrations themselves.
import { openEmbeddedDatabase } from '../../src/db/embedded.ts';
import { openServerDatabase } from '../../src/db/server.ts';
import type { SqlRunner } from '../../src/db/sql.ts';
import { openStore, type Store } from '../../src/db/store.ts';
import { available } from './environment.ts';
import { createTestDatabase } from './postgres.ts';
import { tempDir } from './service.ts';

export interface StoreBackend {
  name: string;
  open(): Promise<{ store: Store; cleanup: () => Promise<void> }>;
}

const postgres = await available('PostgreSQL');

export const STORE_BACKENDS: StoreBackend[] = [
  {
    name: 'embedded PGlite',
    open: async () => {
      const store = await openStore({ dataDir: tempDir() });
      return { store, cleanup: () => store.close() };
    },
  },
  ...(postgres
    ? [
        {
          name: 'PostgreSQL',
          open: async () => {
            const database = await createTestDatabase();
            const store = await openStore({ dataDir: tempDir(), databaseUrl: database.url });
            return {
              store,
              cleanup: async () => {
                await store.close();
                await database.drop();
              },
            };
          },
        },
      ]
    : []),
];

export interface BareBackend {
  name: string;
  open(): Promise<{ sql: SqlRunner; cleanup: () => Promise<void> }>;
}

export const BARE_BACKENDS: BareBackend[] = [
  {
    name: 'embedded PGlite',
    open: async () => {
      const { sql } = await openEmbeddedDatabase(tempDir());
      return { sql, cleanup: () => sql.close() };
    },
  },
  ...(postgres
    ? [
        {
          name: 'PostgreSQL',
          open: async () => {
            const database = await createTestDatabase();
            const sql = openServerDatabase(database.url);
            return {
              sql,
              cleanup: async () => {
                await sql.close();
                await database.drop();
              },
            };
          },
        },
      ]
    : []),
];

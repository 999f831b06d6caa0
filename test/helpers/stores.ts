// The two stores every store-level suite runs against: embedded PGlite, and PostgreSQL when it answers
// (required in CI). Each open() gives a fresh, migrated store and its cleanup.
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

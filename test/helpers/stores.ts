// The two stores every store-level suite runs against: embedded PGlite, and PostgreSQL when it answers
// (required in CI). Each open() gives a fresh, migrated store (a copy of the run's template) and its cleanup; the
// bare backends give a fresh SQL runner with no migration applied, for tests of the migrations themselves; the
// service backends give the settings of a whole test service on a fresh store.
import { openEmbeddedDatabase } from '../../src/db/embedded/index.ts';
import { openServerDatabase } from '../../src/db/server.ts';
import type { SqlRunner } from '../../src/db/sql.ts';
import { openStore, type Store } from '../../src/db/store.ts';
import { available } from './environment.ts';
import { createTestDatabase } from './postgres.ts';
import { tempDir } from './service.ts';
import { embeddedDataDir, migratedDatabase } from './templates.ts';

export { embeddedDataDir, migratedDatabase };

/** where one test's data lives: a fresh data directory and, on PostgreSQL, a fresh database */
interface Place {
  dataDir: string;
  databaseUrl?: string;
  /** drops the database, if any */
  drop(): Promise<void>;
}

/** bare: no migration applied */
const ENGINES: { name: string; place(bare?: boolean): Promise<Place> }[] = [
  {
    name: 'embedded PGlite',
    place: async (bare = false) => ({ dataDir: await embeddedDataDir('tma-test-', { bare }), drop: async () => {} }),
  },
  ...((await available('PostgreSQL'))
    ? [
        {
          name: 'PostgreSQL',
          place: async (bare = false) => {
            const database = bare ? await createTestDatabase() : await migratedDatabase();
            return { dataDir: tempDir(), databaseUrl: database.url, drop: () => database.drop() };
          },
        },
      ]
    : []),
];

/** a store's settings a suite may change: its reads' time budget and queue */
export interface StoreSettings {
  readBudgetMs?: number;
  readQueueLimit?: number;
}

export interface StoreBackend {
  name: string;
  open(settings?: StoreSettings): Promise<{ store: Store; cleanup: () => Promise<void> }>;
}

export const STORE_BACKENDS: StoreBackend[] = ENGINES.map(({ name, place }) => ({
  name,
  open: async (settings: StoreSettings = {}) => {
    const at = await place();
    const store = await openStore(
      { ...at, readBudgetMs: settings.readBudgetMs },
      { readQueueLimit: settings.readQueueLimit },
    );
    return { store, cleanup: () => store.close().then(at.drop) };
  },
}));

export interface ServiceBackend {
  name: string;
  /** the settings that put a test service on a fresh store of this engine, and the cleanup after it closed */
  open(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }>;
}

export const SERVICE_BACKENDS: ServiceBackend[] = ENGINES.map(({ name, place }) => ({
  name,
  open: async () => {
    const at = await place();
    return {
      env: { DATA_DIR: at.dataDir, ...(at.databaseUrl ? { DATABASE_URL: at.databaseUrl } : {}) },
      drop: at.drop,
    };
  },
}));

export interface BareBackend {
  name: string;
  open(): Promise<{ sql: SqlRunner; cleanup: () => Promise<void> }>;
}

export const BARE_BACKENDS: BareBackend[] = ENGINES.map(({ name, place }) => ({
  name,
  open: async () => {
    const at = await place(true);
    const sql = at.databaseUrl ? openServerDatabase(at.databaseUrl) : (await openEmbeddedDatabase(at.dataDir)).sql;
    return { sql, cleanup: () => sql.close().then(at.drop) };
  },
}));

/**
 * Whether the store runs a statement of this text now, for a test that must act while it runs. A server shows it
 * among the database's backends. The embedded store's one thread takes statements in the order they were sent (a
 * statement sent is ahead of all sent after it) and runs a read sent while no statement is in flight at once: there
 * it counts as running once sent.
 */
export async function statementRuns(store: Pick<Store, 'kind' | 'sql'>, text: string): Promise<boolean> {
  if (store.kind === 'embedded') return true;
  const [row] = await store.sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE datname = current_database() AND state = 'active' AND query = $1`,
    [text],
  );
  return row!.n > 0;
}

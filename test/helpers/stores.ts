// The store a store-level suite runs on: the one its vitest project asks for with TEST_STORE, embedded PGlite or
// PostgreSQL. Each open() gives a fresh, migrated store (a copy of the run's template) and its cleanup; the bare
// backend gives a fresh SQL runner with no migration applied, for tests of the migrations themselves; the service
// backend gives the settings of a whole test service on a fresh store.
import { expect } from 'vitest';
import { openEmbeddedDatabase } from '../../src/db/embedded/index.ts';
import { openServerDatabase } from '../../src/db/server.ts';
import type { SqlRunner } from '../../src/db/sql.ts';
import { openStore, type Store } from '../../src/db/store.ts';
import { available, POSTGRES_ADMIN_URL } from './environment.ts';
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

/** a store engine: its name in test titles, the store kind it opens, and a fresh place of its own (bare: no migration applied) */
interface Engine {
  name: string;
  kind: Store['kind'];
  place(bare?: boolean): Promise<Place>;
}

const EMBEDDED: Engine = {
  name: 'embedded PGlite',
  kind: 'embedded',
  place: async (bare = false) => ({ dataDir: await embeddedDataDir('tma-test-', { bare }), drop: async () => {} }),
};

const POSTGRES: Engine = {
  name: 'PostgreSQL',
  kind: 'server',
  place: async (bare = false) => {
    const database = bare ? await createTestDatabase() : await migratedDatabase();
    return { dataDir: tempDir(), databaseUrl: database.url, drop: () => database.drop() };
  },
};

/**
 * The one engine of this run's project (test/vitest.config.ts sets TEST_STORE): the embedded store unless it asks for
 * postgres. A project that asks for PostgreSQL fails when it does not answer, even outside CI: skipping would report
 * its suites green on no store at all.
 */
async function projectEngine(asked = process.env.TEST_STORE || 'embedded'): Promise<Engine> {
  if (asked === 'embedded') return EMBEDDED;
  if (asked !== 'postgres') throw new Error(`TEST_STORE=${asked} names no store (embedded or postgres)`);
  if (!(await available('PostgreSQL')))
    throw new Error(`TEST_STORE=postgres but PostgreSQL does not answer at ${POSTGRES_ADMIN_URL}`);
  return POSTGRES;
}

const ENGINE = await projectEngine();

/**
 * Checks that a store (or a service's store) is of the kind the project asked for: a suite meant for PostgreSQL must
 * not pass on the embedded store unseen, as it would if a service dropped DATABASE_URL and fell back to a data
 * directory.
 */
export function expectProjectStore(store: { kind: Store['kind'] }): void {
  expect(store.kind, `the store of the project's TEST_STORE (${ENGINE.name})`).toBe(ENGINE.kind);
}

/** `cleanup` when `store` is not of the project's kind (the check's failure thrown after it), else nothing */
async function closedUnlessProjectStore(store: { kind: Store['kind'] }, cleanup: () => Promise<void>): Promise<void> {
  try {
    expectProjectStore(store);
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** a store's settings a suite may change: its reads' time budget and queue */
export interface StoreSettings {
  readBudgetMs?: number;
  readQueueLimit?: number;
}

export interface StoreBackend {
  name: string;
  kind: Store['kind'];
  open(settings?: StoreSettings): Promise<{ store: Store; cleanup: () => Promise<void> }>;
}

export const STORE_BACKEND: StoreBackend = {
  name: ENGINE.name,
  kind: ENGINE.kind,
  open: async (settings: StoreSettings = {}) => {
    const at = await ENGINE.place();
    const store = await openStore(
      { ...at, readBudgetMs: settings.readBudgetMs },
      { readQueueLimit: settings.readQueueLimit },
    );
    const cleanup = () => store.close().then(at.drop);
    await closedUnlessProjectStore(store, cleanup);
    return { store, cleanup };
  },
};

export interface ServiceBackend {
  name: string;
  kind: Store['kind'];
  /**
   * the settings that put a test service on a fresh store of this engine, and the cleanup after it closed; the suite
   * checks the started service's store with expectProjectStore()
   */
  open(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }>;
}

export const SERVICE_BACKEND: ServiceBackend = {
  name: ENGINE.name,
  kind: ENGINE.kind,
  open: async () => {
    const at = await ENGINE.place();
    return {
      env: { DATA_DIR: at.dataDir, ...(at.databaseUrl ? { DATABASE_URL: at.databaseUrl } : {}) },
      drop: at.drop,
    };
  },
};

export interface BareBackend {
  name: string;
  kind: Store['kind'];
  open(): Promise<{ sql: SqlRunner; cleanup: () => Promise<void> }>;
}

export const BARE_BACKEND: BareBackend = {
  name: ENGINE.name,
  kind: ENGINE.kind,
  open: async () => {
    const at = await ENGINE.place(true);
    const sql = at.databaseUrl ? openServerDatabase(at.databaseUrl) : (await openEmbeddedDatabase(at.dataDir)).sql;
    const cleanup = () => sql.close().then(at.drop);
    await closedUnlessProjectStore(sql, cleanup);
    return { sql, cleanup };
  },
};

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

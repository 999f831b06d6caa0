// Opens the store the settings ask for (embedded PGlite or a PostgreSQL server), migrated and ready.
import fs from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { PrismaClient } from './prisma-client/index.js';
import { type Config, ConfigError, DEFAULT_READ_BUDGET_MS, DEFAULT_READ_CONNECTIONS } from '../platform/config.ts';
import { EMBEDDED_DIR } from './embedded/layout.ts';
import { applyMigrations } from './migrate.ts';
import { acquireOwnerLock, controlSocketPath } from './embedded/owner-lock.ts';
import { READ_QUEUE_LIMIT } from './read-budget.ts';
import type { ThreadMemory } from '../platform/metrics.ts';
import type { SqlReader, SqlRunner } from './sql.ts';
import type { EmbeddedDatabase } from './embedded/index.ts';

export type { PrismaClient };

export interface Store {
  kind: 'embedded' | 'server';
  /** event plane: raw SQL */
  sql: SqlRunner;
  /** reads of the surfaces (dashboards, insights, read API, public link, bot, alerts, ranking, CSV): within the budget */
  reads: SqlReader;
  /** a read's time budget */
  readBudgetMs: number;
  /** control plane: apps, tokens, audit log, settings */
  prisma: PrismaClient;
  /** the embedded store's thread: what it holds (for /metrics); undefined on PostgreSQL */
  embeddedMemory?: () => Promise<ThreadMemory>;
  close(): Promise<void>;
}

export interface OpenStoreOptions {
  onPoolError?: (error: Error) => void;
  /** the most reads that may wait for the store (default READ_QUEUE_LIMIT) */
  readQueueLimit?: number;
  /** the embedded store stopped a read past its budget by starting its thread again, which took ms */
  onReadStopped?: (ms: number) => void;
  /** a new embedded store's prebuilt cluster (default: the one the install made; null: initdb) */
  clusterTemplate?: string | null;
  /** the prebuilt cluster exists but could not be used (initdb ran instead), and why */
  onClusterTemplateRefused?: (reason: string) => void;
  /**
   * Called before the store opens, once no other service may use DATA_DIR: the embedded store's owner lock is held
   * (a server store's DATA_DIR has no owner lock: at once).
   */
  whileOpening?: () => void;
}

/** in DATA_DIR: which store the directory serves when it is not the embedded one */
const STORE_KIND_FILE = 'store-kind';
const SERVER_STORE = 'postgresql';

/**
 * A data directory used with DATABASE_URL says so, so that a command run without DATABASE_URL (a forgotten
 * variable) is refused instead of quietly opening a second, empty, embedded store beside it. A directory that
 * holds an embedded store is never marked, and the mark is best effort (a read-only DATA_DIR still serves).
 */
function checkStoreKind(config: Pick<Config, 'databaseUrl' | 'dataDir'>): void {
  const file = path.join(config.dataDir, STORE_KIND_FILE);
  if (fs.existsSync(path.join(config.dataDir, EMBEDDED_DIR))) return;
  if (config.databaseUrl) {
    try {
      if (!fs.existsSync(file)) fs.writeFileSync(file, `${SERVER_STORE}\n`, { mode: 0o644 });
    } catch {
      // the mark only guards against a mistake: a directory it cannot be written to serves as before
    }
  } else if (fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim() === SERVER_STORE)
    throw new ConfigError(
      `${config.dataDir} belongs to a service on PostgreSQL: set DATABASE_URL as that service has it ` +
        `(to keep an embedded store in this directory instead, delete ${file})`,
    );
}

/**
 * Prisma's client and one store's adapter. With the store's own code they are a good part of what a start loads, so
 * each store loads only its own, and Prisma loads while the store opens (the embedded one on a thread of its own).
 */
function loadPrisma<Adapter>(adapter: Promise<Adapter>) {
  const loading = Promise.all([import('./prisma-client/index.js'), adapter]);
  // awaited once the store is open, unless its open failed first
  loading.catch(() => {});
  return loading;
}

/**
 * The embedded store's handle as Prisma's adapter uses it (query with array rows and its own parsers, exec,
 * transaction), made before the store's thread is ready: each call waits for it.
 */
function handleOnceOpen(opening: Promise<EmbeddedDatabase>) {
  type Handle = EmbeddedDatabase['pglite'];
  return {
    query: async (...args: Parameters<Handle['query']>) => (await opening).pglite.query(...args),
    exec: async (...args: Parameters<Handle['exec']>) => (await opening).pglite.exec(...args),
    transaction: async (...args: Parameters<Handle['transaction']>) => (await opening).pglite.transaction(...args),
  };
}

/**
 * Prisma's query compiler (WebAssembly, made with the whole schema) is made at its first connect, which would
 * otherwise be the first query after the store opened: this makes it while the store opens. A failure here is the
 * first query's to report.
 */
function warmUp(prisma: PrismaClient): void {
  prisma.$connect().catch(() => {});
}

export async function openStore(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'readBudgetMs' | 'readConnections'>>,
  options: OpenStoreOptions = {},
): Promise<Store> {
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  checkStoreKind(config);
  const readBudgetMs = config.readBudgetMs ?? DEFAULT_READ_BUDGET_MS;
  let sql: SqlRunner;
  let reads: SqlReader;
  let prisma: PrismaClient;
  let release = async () => {};
  let embeddedMemory: Store['embeddedMemory'];
  if (config.databaseUrl) {
    options.whileOpening?.();
    const prismaLoading = loadPrisma(import('@prisma/adapter-pg'));
    const { openServerDatabase, openServerReads, serverPool } = await import('./server.ts');
    sql = openServerDatabase(config.databaseUrl, { onError: options.onPoolError });
    const readRunner = openServerReads(
      config.databaseUrl,
      {
        budgetMs: readBudgetMs,
        queueLimit: options.readQueueLimit ?? READ_QUEUE_LIMIT,
        connections: config.readConnections ?? DEFAULT_READ_CONNECTIONS,
      },
      { onError: options.onPoolError },
    );
    reads = readRunner;
    const controlPool = serverPool(config.databaseUrl, { max: 4, onError: options.onPoolError });
    const [{ PrismaClient }, { PrismaPg }] = await prismaLoading;
    prisma = new PrismaClient({ adapter: new PrismaPg(controlPool) });
    warmUp(prisma);
    release = async () => {
      await controlPool.end();
      await readRunner.close();
    };
  } else {
    const unlock = await acquireOwnerLock(config.dataDir, controlSocketPath(config.dataDir));
    release = async () => unlock();
    options.whileOpening?.();
    try {
      const { openEmbeddedDatabase } = await import('./embedded/index.ts');
      const prismaLoading = loadPrisma(import('pglite-prisma-adapter'));
      const opening = openEmbeddedDatabase(
        config.dataDir,
        { budgetMs: readBudgetMs, queueLimit: options.readQueueLimit, onRestart: options.onReadStopped },
        { template: options.clusterTemplate, onTemplateRefused: options.onClusterTemplateRefused },
      );
      opening.catch(() => {}); // awaited below, once Prisma is made
      const [{ PrismaClient }, { PrismaPGlite }] = await prismaLoading;
      prisma = new PrismaClient({ adapter: new PrismaPGlite(handleOnceOpen(opening) as unknown as PGlite) });
      warmUp(prisma);
      const embedded = await opening;
      sql = embedded.sql;
      reads = embedded.reads;
      embeddedMemory = () => embedded.pglite.memory();
    } catch (error) {
      unlock();
      throw error;
    }
  }
  const close = async () => {
    await prisma.$disconnect();
    await sql.close();
    await release();
  };
  try {
    await applyMigrations(sql);
  } catch (error) {
    await close();
    throw error;
  }
  return { kind: sql.kind, sql, reads, readBudgetMs, prisma, embeddedMemory, close };
}

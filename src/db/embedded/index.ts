// Embedded PostgreSQL (PGlite, WASM) in DATA_DIR, owned by exactly one process and run on its own thread.
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_READ_BUDGET_MS } from '../../platform/config.ts';
import { EMBEDDED_DIR } from './layout.ts';
import type { CreateClusterOptions } from './pglite-cluster.ts';
import { startPGliteThread, type PGliteHandle, type PGliteReadOptions, type PGliteSession } from './pglite-thread.ts';
import { READ_QUEUE_LIMIT } from '../read-budget.ts';
import type { QueryOptions, SqlQueryable, SqlReader, SqlRunner } from '../sql.ts';

function queryable(db: PGliteSession, execute?: PGliteHandle['execute']): SqlQueryable {
  return {
    async query<Row>(text: string, params?: unknown[], options?: QueryOptions) {
      // inside a transaction a statement runs unnamed: the named path runs on the PGlite handle itself,
      // which waits for the transaction to end
      if (options?.name && execute) return (await execute<Row>(options.name, text, params)).rows;
      return (await db.query<Row>(text, params)).rows;
    },
    async exec(script: string) {
      await db.exec(script);
    },
  };
}

export interface EmbeddedDatabase {
  pglite: PGliteHandle;
  sql: SqlRunner;
  /** reads, behind the loader's and the control plane's statements, within their budget */
  reads: SqlReader;
}

/**
 * Opens (creating on first use, from the prebuilt cluster when it checks out) the PGlite cluster under dataDir/pgdata.
 * The caller holds the owner lock.
 */
export async function openEmbeddedDatabase(
  dataDir: string,
  readOptions: Partial<PGliteReadOptions> = {},
  clusterOptions: CreateClusterOptions = {},
): Promise<EmbeddedDatabase> {
  const pgdata = path.join(dataDir, EMBEDDED_DIR);
  fs.mkdirSync(pgdata, { recursive: true, mode: 0o700 });
  const pglite = await startPGliteThread(
    pgdata,
    {
      budgetMs: readOptions.budgetMs ?? DEFAULT_READ_BUDGET_MS,
      queueLimit: readOptions.queueLimit ?? READ_QUEUE_LIMIT,
      onRestart: readOptions.onRestart,
    },
    clusterOptions,
  );
  const sql: SqlRunner = {
    kind: 'embedded',
    ...queryable(pglite, pglite.execute),
    transaction: (fn) => pglite.transaction((tx) => fn(queryable(tx))),
    close: () => pglite.close(),
  };
  const reads: SqlReader = {
    kind: 'embedded',
    query: async <Row>(text: string, params?: unknown[]) => (await pglite.reads.query<Row>(text, params)).rows,
  };
  return { pglite, sql, reads };
}

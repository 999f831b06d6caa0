// Embedded PostgreSQL (PGlite, WASM) in DATA_DIR, owned by exactly one process.
import fs from 'node:fs';
import path from 'node:path';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import type { SqlQueryable, SqlRunner } from './sql.ts';

function queryable(db: PGlite | Transaction): SqlQueryable {
  return {
    async query<Row>(text: string, params?: unknown[]) {
      return (await db.query<Row>(text, params)).rows;
    },
    async exec(script: string) {
      await db.exec(script);
    },
  };
}

export interface EmbeddedDatabase {
  pglite: PGlite;
  sql: SqlRunner;
}

/** Opens (creating on first use) the PGlite cluster under dataDir/pgdata. The caller holds the owner lock. */
export async function openEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  const pgdata = path.join(dataDir, 'pgdata');
  fs.mkdirSync(pgdata, { recursive: true, mode: 0o700 });
  const pglite = await PGlite.create(pgdata);
  const sql: SqlRunner = {
    kind: 'embedded',
    ...queryable(pglite),
    transaction: (fn) => pglite.transaction((tx) => fn(queryable(tx))),
    close: () => pglite.close(),
  };
  return { pglite, sql };
}

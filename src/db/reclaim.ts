// Makes the space deleted rows held reusable on the embedded store. PGlite runs no autovacuum: without a VACUUM,
// pages that rows were deleted from are never written again, and the data directory grows by every purge's worth.
import type { SqlRunner } from './sql.ts';

/**
 * VACUUMs `tables` (the project's own table names) on the embedded store, one statement each, so the next inserts
 * reuse what deletes freed; a server's autovacuum does this by itself.
 */
export async function reclaimDeletedSpace(sql: SqlRunner, tables: Iterable<string>): Promise<void> {
  if (sql.kind !== 'embedded') return;
  for (const table of new Set(tables)) await sql.query(`VACUUM ${table}`);
}

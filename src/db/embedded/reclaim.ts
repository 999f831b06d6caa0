// After a purge: makes the space deleted rows held reusable on the embedded store, and the planner's statistics true again.
// PGlite runs no autovacuum: without a VACUUM, pages that rows were deleted from are never written again, and the
// data directory grows by every purge's worth; without an ANALYZE, plans are made for rows that are gone.
import type { SqlRunner } from '../sql.ts';

/**
 * `VACUUM (ANALYZE)`s `tables` (the project's own table names) on the embedded store, one statement each, so the next
 * inserts reuse what deletes freed; on a server, whose autovacuum reclaims space (or the service's table maintenance,
 * where it is off), ANALYZEs them, so reads are planned for what remains at once.
 */
export async function reclaimDeletedSpace(sql: SqlRunner, tables: Iterable<string>): Promise<void> {
  const statement = sql.kind === 'embedded' ? 'VACUUM (ANALYZE)' : 'ANALYZE';
  for (const table of new Set(tables)) await sql.query(`${statement} ${table}`);
}

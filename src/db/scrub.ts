// Takes deleted rows' bytes out of the store's files, where an erase must leave nothing of a user: a VACUUM makes their
// space reusable but leaves their bytes in the pages (and indexes) until new rows happen to overwrite them.
import type { SqlRunner } from './sql.ts';

/** the longest a server's rewrite of the erased tables may take before it is given up (the erase itself stands) */
export const SCRUB_MAX_MS = 30 * 60_000;

/**
 * Rewrites `tables` (the project's own table names) into new files with their live rows alone (VACUUM FULL: the old
 * files are emptied at commit) and gathers their statistics afresh (ANALYZE), on both stores. On the embedded store
 * also the old statistics (pg_statistic keeps sampled values, a user's key among them) and the WAL: the segments
 * holding the deleted rows' inserts go, removed rather than recycled (wal_recycle is off, durable-pglite.ts), once two
 * checkpoints have passed them (the first may leave behind a segment written before wal_recycle was off). A server's
 * WAL, statistics and backups are its operator's (its archive and replicas keep them by design).
 */
export async function scrubDeletedRows(sql: SqlRunner, tables: Iterable<string>): Promise<void> {
  const statements = [...new Set(tables)].map((table) => `VACUUM (FULL, ANALYZE) ${table}`);
  if (sql.kind === 'server') {
    if (sql.maintain) await sql.maintain(statements, SCRUB_MAX_MS);
    else for (const text of statements) await sql.query(text);
    return;
  }
  for (const text of statements) await sql.query(text);
  await sql.query('VACUUM FULL pg_statistic');
  for (let round = 0; round < 2; round++) {
    await sql.query('SELECT pg_switch_wal()');
    await sql.query('CHECKPOINT');
  }
}

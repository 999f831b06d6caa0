// Takes deleted rows' bytes out of the store's files, where an erase must leave nothing of a user: a VACUUM makes their
// space reusable but leaves their bytes in the pages (and indexes) until new rows happen to overwrite them.
import { outlastOlderSnapshots } from './older-snapshots.ts';
import type { SqlRunner } from './sql.ts';

/** the longest a server's rewrite of the erased tables may take before it is given up (the erase itself stands) */
export const SCRUB_MAX_MS = 30 * 60_000;

/** the planner's statistics: ANALYZE replaces a table's rows there, and the old ones hold sampled values */
const STATISTICS = 'pg_catalog.pg_statistic';

/** SQLSTATE insufficient_privilege */
const NOT_PERMITTED = '42501';

/**
 * Rewrites `tables` (the project's own table names) into new files with their live rows alone (VACUUM FULL: the old
 * files are emptied at commit) and gathers their statistics afresh (ANALYZE), on both stores; then rewrites the
 * statistics, whose rows the ANALYZE replaced still hold sampled values (a user's key among them). On the embedded
 * store also the WAL: the segments holding the deleted rows' inserts go, removed rather than recycled (wal_recycle is
 * off, durable-pglite.ts), once two checkpoints have passed them (the first may leave behind a segment written before
 * wal_recycle was off). On a server each rewrite first waits for the transactions that could still see the rows it
 * drops (older-snapshots.ts), and the statistics are rewritten only where the service's role may (a superuser, the
 * database's owner, or the table's MAINTAIN privilege). Answers what is then left to the operator, beyond a server's
 * WAL, archives, replicas and backups, which always are: one sentence each, none when all went.
 */
export async function scrubDeletedRows(sql: SqlRunner, tables: Iterable<string>): Promise<string[]> {
  const statements = [...new Set(tables)].map((table) => `VACUUM (FULL, ANALYZE) ${table}`);
  if (sql.kind === 'server') {
    const left: string[] = [];
    const warn = (message: string) => {
      if (!left.includes(message)) left.push(message);
    };
    await rewriteOnServer(sql, statements, warn);
    if (!(await rewriteStatistics(sql, warn)))
      warn(
        `The store's role may not rewrite ${STATISTICS}: the statistics the erase replaced stay in its dead rows until ` +
          `a superuser or the database's owner runs VACUUM FULL ${STATISTICS}.`,
      );
    return left;
  }
  for (const text of statements) await sql.query(text);
  await sql.query(`VACUUM FULL ${STATISTICS}`);
  for (let round = 0; round < 2; round++) {
    await sql.query('SELECT pg_switch_wal()');
    await sql.query('CHECKPOINT');
  }
  return [];
}

/** runs the rewrites once no transaction older than them runs, so none keeps a deleted row alive in the new files */
async function rewriteOnServer(sql: SqlRunner, statements: string[], warn: (message: string) => void): Promise<void> {
  if (!(await outlastOlderSnapshots(sql)))
    warn(
      'A transaction older than the erase was still open when its tables were rewritten: rows it could see may stay ' +
        'in their files until they are rewritten again (erase the user again once it has ended).',
    );
  if (sql.maintain) await sql.maintain(statements, SCRUB_MAX_MS);
  else for (const text of statements) await sql.query(text);
}

/**
 * Rewrites the statistics; false when the role may not. PostgreSQL skips a table the role may not vacuum with a
 * warning, no error: the rewrite is known by the table's new file.
 */
async function rewriteStatistics(sql: SqlRunner, warn: (message: string) => void): Promise<boolean> {
  const fileOf = async () =>
    (await sql.query<{ node: string }>(`SELECT pg_relation_filenode('${STATISTICS}')::text AS node`))[0]?.node;
  const before = await fileOf();
  try {
    await rewriteOnServer(sql, [`VACUUM FULL ${STATISTICS}`], warn);
  } catch (error) {
    if ((error as { code?: unknown }).code === NOT_PERMITTED) return false;
    throw error;
  }
  return (await fileOf()) !== before;
}

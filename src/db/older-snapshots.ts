// Waits, on a PostgreSQL server, for the transactions that may still read rows just deleted: a VACUUM FULL copies a
// deleted row into its new file for as long as any transaction of the database might still see it, so a rewrite run
// beside one (a read, the loader's commit, an ANALYZE of another table) would keep the very bytes it is run to remove.
import { named } from './named-sql.ts';
import type { SqlRunner } from './sql.ts';

/** the longest a rewrite waits for them: past the 5 s limit of the service's own statements and reads */
export const OLDER_SNAPSHOTS_WAIT_MS = 15_000;
const POLL_MS = 50;

/** the next transaction id, as an xid: every transaction or snapshot begun before now is older */
const NEXT_XID = `SELECT (pg_snapshot_xmax(pg_current_snapshot())::text::bigint % 4294967296)::text AS next`;

/**
 * Other sessions of this database holding a snapshot or a transaction older than `next`. A plain vacuum's (an
 * autovacuum worker not analysing) is left out: the server does not count it when it decides what a rewrite may drop.
 * Sessions of another role show no xmin to a role without pg_read_all_stats, and are not waited for.
 */
const OLDER = `
SELECT count(*)::int AS n FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()
  AND greatest(age(backend_xmin), age(backend_xid)) > age({{next}}::xid)
  AND NOT (backend_type = 'autovacuum worker' AND query NOT LIKE '%ANALYZE%')`;

/** resolves true once every transaction of the database older than the call has ended, false if some ran past maxMs */
export async function outlastOlderSnapshots(sql: SqlRunner, maxMs = OLDER_SNAPSHOTS_WAIT_MS): Promise<boolean> {
  const [{ next }] = (await sql.query<{ next: string }>(NEXT_XID)) as [{ next: string }];
  const until = Date.now() + maxMs;
  for (;;) {
    const [{ n }] = (await sql.query<{ n: number }>(...named(OLDER, { next }))) as [{ n: number }];
    if (n === 0) return true;
    if (Date.now() >= until) return false;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

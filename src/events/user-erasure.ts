// Erases one user of one app from the event plane: their events, their sessions' rows and their per-user rows,
// in bounded statements that ingestion runs between. The counts (events, users and sessions per day, dimensions,
// custom event counts, usage, activity) stay as they are: anonymous numbers that keep counting the user. Only the
// property values their custom events carried are no longer listed: their counts move to "(other)".
import type { SqlQueryable, SqlRunner } from '../db/sql.ts';
import {
  customDataObjectSql,
  customNameSql,
  cutTextSql,
  isPropertySql,
  OTHER,
  propertyValueSql,
} from './custom-events.ts';
import { entryCount, withoutUser } from './funnel-postings.ts';
import { CHUNK_ROWS } from './purge.ts';

/** rows deleted per table */
export interface ErasedRows {
  events: number;
  daily_sessions: number;
  daily_funnel_sessions: number;
  daily_users: number;
  app_users: number;
  wallet_users: number;
  /** the user's events taken out of the funnel postings */
  funnel_postings: number;
}

/** every table an erase deletes or rewrites rows of, for the compaction after it */
export const ERASED_TABLES = [
  'events',
  'daily_sessions',
  'daily_funnel_sessions',
  'daily_users',
  'app_users',
  'wallet_users',
  'funnel_postings',
  'daily_custom_values',
  'custom_catalog',
] as const;

export interface Erasure {
  deleted: ErasedRows;
  /**
   * false when the user's events kept being stored while the erase ran, round after round: what was stored
   * meanwhile may remain, and erasing again removes it
   */
  complete: boolean;
}

export interface ErasureOptions {
  /** events read (and per-user rows deleted) per statement; default per engine, as for purges */
  chunkRows?: number;
  /** walks over the app's events before giving up on a user whose events keep arriving */
  maxRounds?: number;
}

/**
 * The user's rows keyed by user, daily_users last. $1 the app, $2 the user key (base64), $3 the chunk's rows.
 * Only app_users and wallet_users have the user first in an index; daily_users is read over the app's range.
 */
const USER_TABLES = ['wallet_users', 'app_users', 'daily_users'] as const;

const deleteUserChunk = (table: (typeof USER_TABLES)[number]) => `
WITH gone AS (
  DELETE FROM ${table} t WHERE t.ctid = ANY(ARRAY(
    SELECT ctid FROM ${table} t WHERE t.app_id = $1 AND t.user_key = decode($2, 'base64') LIMIT $3
  )) AND t.app_id = $1 AND t.user_key = decode($2, 'base64')
  RETURNING 1
)
SELECT count(*)::int AS n FROM gone`;

/**
 * One step of the walk over the app's events in key order: the next $4 events after the key $3 (base64; '' at the
 * start). The user's among them ($2) are deleted with their sessions' rows in the same statement, so an erase cut
 * short never leaves sessions behind that no event leads to any more. A session is the user's when one of their
 * events names it. `last` is where the next step starts; null once the walk has passed the last event.
 */
const WALK_STEP = `
WITH range AS (
  SELECT event_key, user_key, session_id, day FROM events
  WHERE app_id = $1 AND event_key > decode($3, 'base64') ORDER BY event_key LIMIT $4
), mine AS (
  SELECT event_key, session_id, day FROM range WHERE user_key = decode($2, 'base64')
), sessions AS (
  DELETE FROM daily_sessions s USING (SELECT DISTINCT session_id FROM mine) m
  WHERE s.app_id = $1 AND s.session_id = m.session_id RETURNING 1
), funnel AS (
  DELETE FROM daily_funnel_sessions f USING (SELECT DISTINCT day, session_id FROM mine) m
  WHERE f.app_id = $1 AND f.day = m.day AND f.session_id = m.session_id RETURNING 1
), custom_pairs AS (
  -- the property values of the user's custom events as the rollups counted them (only tracked names and properties
  -- have rows, so matching a row is being tracked)
  SELECT m.day, ${customNameSql("e.props->'custom_data'")} AS name, ${cutTextSql('p.key')} AS property,
         ${propertyValueSql('p.value')} AS value, count(*) AS events
  FROM mine m JOIN events e ON e.app_id = $1 AND e.event_key = m.event_key AND e.event_name = 'custom-event'
  CROSS JOIN LATERAL jsonb_each(${customDataObjectSql("e.props->'custom_data'")}) AS p(key, value)
  WHERE ${isPropertySql('p')}
  GROUP BY 1, 2, 3, 4
), unlisted_rows AS (
  SELECT v.day, v.name, v.property, v.value, least(c.events, v.events) AS events
  FROM daily_custom_values v JOIN custom_pairs c
    ON v.app_id = $1 AND v.day = c.day AND v.name = c.name AND v.property = c.property AND v.value = c.value
  WHERE c.value <> '${OTHER}'
), unlisted AS (
  -- the user's events leave their values' rows (a row emptied so is deleted after the walk)
  UPDATE daily_custom_values v SET events = v.events - u.events FROM unlisted_rows u
  WHERE v.app_id = $1 AND v.day = u.day AND v.name = u.name AND v.property = u.property AND v.value = u.value
  RETURNING u.day, u.name, u.property, u.events
), as_other AS (
  -- and are counted as OTHER instead, so the property's total stays
  INSERT INTO daily_custom_values AS v (app_id, day, name, property, value, events)
  SELECT $1, day, name, property, '${OTHER}', sum(events) FROM unlisted GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (app_id, day, name, property, value) DO UPDATE SET events = v.events + excluded.events
), gone AS (
  DELETE FROM events e USING mine m WHERE e.app_id = $1 AND e.event_key = m.event_key RETURNING 1
)
SELECT (SELECT encode(event_key, 'base64') FROM range ORDER BY event_key DESC LIMIT 1) AS last,
       (SELECT count(*)::int FROM range) AS read,
       (SELECT count(*)::int FROM gone) AS events,
       (SELECT count(*)::int FROM sessions) AS sessions,
       (SELECT count(*)::int FROM funnel) AS funnel_sessions`;

const noRows = (): ErasedRows => ({
  events: 0,
  daily_sessions: 0,
  daily_funnel_sessions: 0,
  daily_users: 0,
  app_users: 0,
  wallet_users: 0,
  funnel_postings: 0,
});

/**
 * The app's property values the erase emptied: their rows, and their catalog entries once no day counts them (their
 * places then take new values). Values an erase made empty are the only rows without events.
 */
const DROP_EMPTIED_VALUES = `
WITH emptied AS (
  DELETE FROM daily_custom_values WHERE app_id = $1 AND events <= 0 RETURNING name, property, value
), untracked AS (
  DELETE FROM custom_catalog c USING (SELECT DISTINCT name, property, value FROM emptied) g
  WHERE c.app_id = $1 AND c.level = 2 AND c.name = g.name AND c.property = g.property AND c.value = g.value
    AND NOT EXISTS (SELECT 1 FROM daily_custom_values v WHERE v.app_id = $1 AND v.name = g.name
                    AND v.property = g.property AND v.value = g.value AND v.events > 0)
  RETURNING 1
)
SELECT count(*)::int AS n FROM untracked`;

/** funnel postings rows read per statement: a row holds a commit's events of one step and day, up to megabytes */
const POSTINGS_CHUNK = 100;

/** the next rows of the app's funnel postings after ($2, $3, $4) in key order (from the start: ('', any day, 0)) */
const POSTINGS_RANGE = `
SELECT step, day::text AS day, id::text AS id FROM funnel_postings
WHERE app_id = $1 AND (step, day, id) > ($2::text COLLATE "C", $3::date, $4::bigint)
ORDER BY step, day, id LIMIT ${POSTINGS_CHUNK}`;

/**
 * Of the rows after ($2, $3, $4) up to ($5, $6, $7), those holding the user's key ($8), locked until the step's
 * rewrite commits: two erases of one app never write back each other's entries
 */
const POSTINGS_OF_USER = `
SELECT step, day::text AS day, id::text AS id, entries FROM funnel_postings
WHERE app_id = $1 AND (step, day, id) > ($2::text COLLATE "C", $3::date, $4::bigint)
  AND (step, day, id) <= ($5::text COLLATE "C", $6::date, $7::bigint) AND position(decode($8, 'base64') IN entries) > 0
FOR UPDATE`;

interface PostingsRow {
  step: string;
  day: string;
  id: string;
}

/** takes the user's entries out of a step's rows (deleting a row left empty); returns how many */
async function rewritePostings(
  tx: SqlQueryable,
  appId: number,
  userKey: Buffer,
  rows: (PostingsRow & { entries: Uint8Array })[],
) {
  let removed = 0;
  for (const row of rows) {
    const before = Buffer.from(row.entries.buffer, row.entries.byteOffset, row.entries.byteLength);
    const after = withoutUser(before, userKey);
    if (after === before) continue;
    removed += entryCount(before) - (after ? entryCount(after) : 0);
    const key = [appId, row.step, row.day, row.id];
    if (after)
      await tx.query(
        `UPDATE funnel_postings SET entries = decode($5, 'base64') WHERE app_id = $1 AND step = $2 AND day = $3::date AND id = $4::bigint`,
        [...key, after.toString('base64')],
      );
    else
      await tx.query(
        `DELETE FROM funnel_postings WHERE app_id = $1 AND step = $2 AND day = $3::date AND id = $4::bigint`,
        key,
      );
  }
  return removed;
}

/**
 * Erases the user with this key from the app: what is stored when it runs. The order makes a commit of the
 * user's events landing meanwhile show: the per-user rows go first (daily_users last), then a walk over every
 * event of the app deletes the user's, then the per-user rows again. A commit after the first daily_users delete
 * finds no row of the user for its day and writes one; the second pass finds it, and the walk runs again, since
 * that commit's events may sit behind it. When the second pass finds none, no commit stored the user's events
 * after the first, and the walk, which started after it, deleted every event stored before it. Events the
 * service accepted before the erase but loads after it (a backlog in an ingest node's log) are stored as new.
 */
export async function eraseUser(
  sql: SqlRunner,
  appId: number,
  userKey: Buffer,
  options: ErasureOptions = {},
): Promise<Erasure> {
  const chunkRows = options.chunkRows ?? CHUNK_ROWS[sql.kind];
  const maxRounds = options.maxRounds ?? 3;
  const key = userKey.toString('base64');
  const deleted = noRows();

  const deleteUserRows = async (): Promise<number> => {
    let dailyUsers = 0;
    for (const table of USER_TABLES) {
      for (;;) {
        const [{ n }] = (await sql.query<{ n: number }>(deleteUserChunk(table), [appId, key, chunkRows])) as [
          { n: number },
        ];
        deleted[table] += n;
        if (table === 'daily_users') dailyUsers += n;
        if (n < chunkRows) break;
      }
    }
    return dailyUsers;
  };

  const walkEvents = async (): Promise<void> => {
    let after = '';
    for (;;) {
      const [step] = (await sql.query<{
        last: string | null;
        read: number;
        events: number;
        sessions: number;
        funnel_sessions: number;
      }>(WALK_STEP, [appId, key, after, chunkRows])) as [
        { last: string | null; read: number; events: number; sessions: number; funnel_sessions: number },
      ];
      deleted.events += step.events;
      deleted.daily_sessions += step.sessions;
      deleted.daily_funnel_sessions += step.funnel_sessions;
      if (step.last === null || step.read < chunkRows) return;
      after = step.last;
    }
  };

  const walkPostings = async (): Promise<void> => {
    let after = ['', '0001-01-01', '0'];
    for (;;) {
      const range = await sql.query<PostingsRow>(POSTINGS_RANGE, [appId, ...after]);
      const last = range.at(-1);
      if (!last) return;
      const through = [last.step, last.day, last.id];
      await sql.transaction(async (tx) => {
        const rows = await tx.query<PostingsRow & { entries: Uint8Array }>(POSTINGS_OF_USER, [
          appId,
          ...after,
          ...through,
          key,
        ]);
        deleted.funnel_postings += await rewritePostings(tx, appId, userKey, rows);
      });
      if (range.length < POSTINGS_CHUNK) return;
      after = through;
    }
  };

  await deleteUserRows();
  for (let round = 1; ; round++) {
    await walkEvents();
    await walkPostings();
    const storedMeanwhile = await deleteUserRows();
    await sql.query(DROP_EMPTIED_VALUES, [appId]);
    if (storedMeanwhile === 0) return { deleted, complete: true };
    if (round === maxRounds) return { deleted, complete: false };
  }
}

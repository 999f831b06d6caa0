// Erases one user of one app from the event plane: their events, their sessions' rows and their per-user rows,
// in bounded statements that ingestion runs between. The counts (events, users and sessions per day, dimensions,
// custom event counts, usage, activity) stay as they are: anonymous numbers that keep counting the user. Only the
// property values their custom events carried are no longer listed: their counts move to "(other)".
import { named } from '../../db/named-sql.ts';
import type { SqlQueryable, SqlReader, SqlRunner } from '../../db/sql.ts';
import {
  customDataObjectSql,
  customNameSql,
  cutTextSql,
  isPropertySql,
  OTHER,
  propertyValueSql,
} from '../custom-events.ts';
import { entryCount, withoutUser } from '../write/funnel-posting-format.ts';
import { CHUNK_ROWS } from './deleted-app-purge.ts';
import { EVENT_PLANE_TABLE_LIST } from '../write/rollups/index.ts';
import type { RollupTable } from '../write/rollups/rollup.ts';

/** rows deleted per table */
export interface ErasedRows {
  events: number;
  daily_sessions: number;
  daily_users: number;
  app_users: number;
  wallet_users: number;
  verified_sessions: number;
  /** the user's events taken out of the funnel postings */
  funnel_postings: number;
}

/** what of a user an erase would delete now, as an owner is asked to confirm it: their events and their sessions */
export interface StoredOfUser {
  events: number;
  /** the sessions their events name: an erase deletes these sessions' rows with the events */
  sessions: number;
}

/** events has no index led by the user: this reads the app's events once, as the erase's walk does */
const STORED_OF_USER = `
SELECT count(*)::int AS events, count(DISTINCT session_id)::int AS sessions FROM events
WHERE app_id = {{app}} AND user_key = decode({{user}}, 'base64')`;

/** the user's stored events and sessions in the app, read within the read budget of the surface that asks */
export async function storedOfUser(sql: SqlReader, appId: number, userKey: Buffer): Promise<StoredOfUser> {
  const [row] = await sql.query<StoredOfUser>(
    ...named(STORED_OF_USER, { app: appId, user: userKey.toString('base64') }),
  );
  return { events: row?.events ?? 0, sessions: row?.sessions ?? 0 };
}

/** every table an erase deletes or rewrites rows of, for the compaction after it: all but the anonymous counts */
export const ERASED_TABLES: readonly string[] = EVENT_PLANE_TABLE_LIST.filter(
  ({ erasure }) => erasure.kind !== 'kept',
).map(({ name }) => name);

/** the tables whose user's bytes a step of this module takes out (the others are deleted by their keys) */
const REWRITTEN = ['events', 'funnel_postings', 'daily_custom_values', 'custom_catalog'];
for (const { name, erasure } of EVENT_PLANE_TABLE_LIST)
  if (erasure.kind === 'rewritten' && !REWRITTEN.includes(name))
    throw new Error(`${name} is declared rewritten by an erase, but no step of the erase rewrites it`);

/** rows keyed by the user, the table marking the user's commits last (see eraseUser) */
const USER_TABLES = EVENT_PLANE_TABLE_LIST.filter(({ erasure }) => erasure.kind === 'user')
  .sort((a, b) => Number(marksCommits(a)) - Number(marksCommits(b)))
  .map(({ name }) => name as keyof ErasedRows);

function marksCommits(table: RollupTable): boolean {
  return table.erasure.kind === 'user' && table.erasure.marksCommits === true;
}

/** rows keyed by the user's sessions, with the columns they are matched on with the user's events */
const SESSION_TABLES = EVENT_PLANE_TABLE_LIST.flatMap(({ name, erasure }) =>
  erasure.kind === 'session' ? [{ name: name as keyof ErasedRows, match: erasure.match }] : [],
);

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
 * A chunk of `rows` of the user's rows of a table keyed by user. Only app_users and wallet_users have the user first
 * in an index; daily_users is read over the app's range.
 */
const deleteUserChunk = (table: string) => `
WITH gone AS (
  DELETE FROM ${table} t WHERE t.ctid = ANY(ARRAY(
    SELECT ctid FROM ${table} t WHERE t.app_id = {{app}} AND t.user_key = decode({{user}}, 'base64') LIMIT {{rows}}
  )) AND t.app_id = {{app}} AND t.user_key = decode({{user}}, 'base64')
  RETURNING 1
)
SELECT count(*)::int AS n FROM gone`;

/**
 * One step of the walk over the app's events in key order: the next `rows` events after the key `after` (base64; ''
 * at the start). The user's among them are deleted with their sessions' rows in the same statement, so an erase cut
 * short never leaves sessions behind that no event leads to any more. A session is the user's when one of their
 * events names it. `last` is where the next step starts; null once the walk has passed the last event.
 */
const WALK_STEP = `
WITH range AS (
  SELECT event_key, user_key, session_id, day FROM events
  WHERE app_id = {{app}} AND event_key > decode({{after}}, 'base64') ORDER BY event_key LIMIT {{rows}}
), mine AS (
  SELECT event_key, session_id, day FROM range WHERE user_key = decode({{user}}, 'base64')
), ${SESSION_TABLES.map(
  ({ name, match }) => `gone_${name} AS (
  DELETE FROM ${name} s USING (SELECT DISTINCT ${match.join(', ')} FROM mine) m
  WHERE s.app_id = {{app}} AND ${match.map((column) => `s.${column} = m.${column}`).join(' AND ')} RETURNING 1
)`,
).join(', ')}, custom_pairs AS (
  -- the property values of the user's custom events as the rollups counted them (only tracked names and properties
  -- have rows, so matching a row is being tracked)
  SELECT m.day, ${customNameSql("e.props->'custom_data'")} AS name, ${cutTextSql('p.key')} AS property,
         ${propertyValueSql('p.value')} AS value, count(*) AS events
  FROM mine m JOIN events e ON e.app_id = {{app}} AND e.event_key = m.event_key AND e.event_name = 'custom-event'
  CROSS JOIN LATERAL jsonb_each(${customDataObjectSql("e.props->'custom_data'")}) AS p(key, value)
  WHERE ${isPropertySql('p')}
  GROUP BY 1, 2, 3, 4
), unlisted_rows AS (
  SELECT v.day, v.name, v.property, v.value, least(c.events, v.events) AS events
  FROM daily_custom_values v JOIN custom_pairs c
    ON v.app_id = {{app}} AND v.day = c.day AND v.name = c.name AND v.property = c.property AND v.value = c.value
  WHERE c.value <> '${OTHER}'
), unlisted AS (
  -- the user's events leave their values' rows (a row emptied so is deleted after the walk)
  UPDATE daily_custom_values v SET events = v.events - u.events FROM unlisted_rows u
  WHERE v.app_id = {{app}} AND v.day = u.day AND v.name = u.name AND v.property = u.property AND v.value = u.value
  RETURNING u.day, u.name, u.property, u.events
), as_other AS (
  -- and are counted as OTHER instead, so the property's total stays
  INSERT INTO daily_custom_values AS v (app_id, day, name, property, value, events)
  SELECT {{app}}, day, name, property, '${OTHER}', sum(events) FROM unlisted GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (app_id, day, name, property, value) DO UPDATE SET events = v.events + excluded.events
), gone AS (
  DELETE FROM events e USING mine m WHERE e.app_id = {{app}} AND e.event_key = m.event_key RETURNING 1
)
SELECT (SELECT encode(event_key, 'base64') FROM range ORDER BY event_key DESC LIMIT 1) AS last,
       (SELECT count(*)::int FROM range) AS read,
       (SELECT count(*)::int FROM gone) AS events,
       ${SESSION_TABLES.map(({ name }) => `(SELECT count(*)::int FROM gone_${name}) AS ${name}`).join(', ')}`;

const noRows = (): ErasedRows =>
  Object.fromEntries(
    ['events', ...USER_TABLES, ...SESSION_TABLES.map(({ name }) => name), 'funnel_postings'].map((name) => [name, 0]),
  ) as unknown as ErasedRows;

/**
 * The app's property values the erase emptied: their rows, and their catalog entries once no day counts them (their
 * places then take new values). Values an erase made empty are the only rows without events.
 */
const DROP_EMPTIED_VALUES = `
WITH emptied AS (
  DELETE FROM daily_custom_values WHERE app_id = {{app}} AND events <= 0 RETURNING name, property, value
), untracked AS (
  DELETE FROM custom_catalog c USING (SELECT DISTINCT name, property, value FROM emptied) g
  WHERE c.app_id = {{app}} AND c.level = 2 AND c.name = g.name AND c.property = g.property AND c.value = g.value
    AND NOT EXISTS (SELECT 1 FROM daily_custom_values v WHERE v.app_id = {{app}} AND v.name = g.name
                    AND v.property = g.property AND v.value = g.value AND v.events > 0)
  RETURNING 1
)
SELECT count(*)::int AS n FROM untracked`;

/** funnel postings rows read per statement: a row holds a commit's events of one step and day, up to megabytes */
const POSTINGS_CHUNK = 100;

/** the next rows of the app's funnel postings after `after` in key order (from the start: ('', any day, 0)) */
const POSTINGS_RANGE = `
SELECT step, day::text AS day, id::text AS id FROM funnel_postings
WHERE app_id = {{app}} AND (step, day, id) > ({{after_step}}::text COLLATE "C", {{after_day}}::date, {{after_id}}::bigint)
ORDER BY step, day, id LIMIT ${POSTINGS_CHUNK}`;

/**
 * Of the rows after `after` up to `through`, those holding the user's key, locked until the step's
 * rewrite commits: two erases of one app never write back each other's entries
 */
const POSTINGS_OF_USER = `
SELECT step, day::text AS day, id::text AS id, entries FROM funnel_postings
WHERE app_id = {{app}} AND (step, day, id) > ({{after_step}}::text COLLATE "C", {{after_day}}::date, {{after_id}}::bigint)
  AND (step, day, id) <= ({{through_step}}::text COLLATE "C", {{through_day}}::date, {{through_id}}::bigint)
  AND position(decode({{user}}, 'base64') IN entries) > 0
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
    const key = { app: appId, step: row.step, day: row.day, id: row.id };
    const where = `app_id = {{app}} AND step = {{step}} AND day = {{day}}::date AND id = {{id}}::bigint`;
    if (after)
      await tx.query(
        ...named(`UPDATE funnel_postings SET entries = decode({{entries}}, 'base64') WHERE ${where}`, {
          ...key,
          entries: after.toString('base64'),
        }),
      );
    else await tx.query(...named(`DELETE FROM funnel_postings WHERE ${where}`, key));
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
    let marked = 0;
    for (const table of USER_TABLES) {
      for (;;) {
        const [{ n }] = (await sql.query<{ n: number }>(
          ...named(deleteUserChunk(table), { app: appId, user: key, rows: chunkRows }),
        )) as [{ n: number }];
        deleted[table] += n;
        if (marksCommits(EVENT_PLANE_TABLE_LIST.find(({ name }) => name === table)!)) marked += n;
        if (n < chunkRows) break;
      }
    }
    return marked;
  };

  const walkEvents = async (): Promise<void> => {
    let after = '';
    for (;;) {
      type Step = { last: string | null; read: number; events: number } & Record<string, number>;
      const [step] = (await sql.query<Step>(
        ...named(WALK_STEP, { app: appId, user: key, after, rows: chunkRows }),
      )) as [Step];
      deleted.events += step.events;
      for (const { name } of SESSION_TABLES) deleted[name] += step[name]!;
      if (step.last === null || step.read < chunkRows) return;
      after = step.last;
    }
  };

  const walkPostings = async (): Promise<void> => {
    let after = { after_step: '', after_day: '0001-01-01', after_id: '0' };
    for (;;) {
      const range = await sql.query<PostingsRow>(...named(POSTINGS_RANGE, { app: appId, ...after }));
      const last = range.at(-1);
      if (!last) return;
      const through = { through_step: last.step, through_day: last.day, through_id: last.id };
      await sql.transaction(async (tx) => {
        const rows = await tx.query<PostingsRow & { entries: Uint8Array }>(
          ...named(POSTINGS_OF_USER, { app: appId, ...after, ...through, user: key }),
        );
        deleted.funnel_postings += await rewritePostings(tx, appId, userKey, rows);
      });
      if (range.length < POSTINGS_CHUNK) return;
      after = { after_step: last.step, after_day: last.day, after_id: last.id };
    }
  };

  await deleteUserRows();
  for (let round = 1; ; round++) {
    await walkEvents();
    await walkPostings();
    const storedMeanwhile = await deleteUserRows();
    await sql.query(...named(DROP_EMPTIED_VALUES, { app: appId }));
    if (storedMeanwhile === 0) return { deleted, complete: true };
    if (round === maxRounds) return { deleted, complete: false };
  }
}

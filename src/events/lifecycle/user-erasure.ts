// Erases one user of one app from the event plane: their events, their sessions' rows and their per-user rows,
// in bounded statements that ingestion runs between. The counts that carry text (sessions per launch attribute, custom
// events per name and property value) lose the user's part; a text only the user sent (a start_param, a custom event's
// name, a property's name or value) leaves every table (erased-texts.ts). The other counts (events, users and sessions
// per day, usage, activity, launch checks) stay as they are: anonymous numbers that keep counting the user.
import { named } from '../../db/named-sql.ts';
import type { SqlQueryable, SqlReader, SqlRunner } from '../../db/sql.ts';
import { entryCount, withoutUser } from '../write/funnel-posting-format.ts';
import { CHUNK_ROWS } from './deleted-app-purge.ts';
import { retriedOnDeadlock } from './deadlock-retry.ts';
import { COUNTS_WITHOUT_USER, DROP_EMPTIED, MINE_ROLLED_UP } from './erased-counts.ts';
import { dropTextsOfUser, type FoundTexts, GatheredTexts, WALK_TEXTS } from './erased-texts.ts';
import { EVENT_PLANE_TABLE_LIST, type EventPlaneTable } from '../write/rollups/index.ts';
import type { RollupTable } from '../write/rollups/rollup.ts';

/** the tables whose rows of the user an erase deletes by the user's key or sessions */
type DeletedTable = Extract<EventPlaneTable, { erasure: { kind: 'user' | 'session' } }>['name'];

/**
 * rows deleted per table: the user's events, the rows of every table declared deleted by user or session (a rollup
 * declared so is counted here, or this module does not compile), and funnel_postings, the user's events taken out of
 * the postings
 */
export type ErasedRows = Record<'events' | DeletedTable | 'funnel_postings', number>;

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
const REWRITTEN = [
  'events',
  'funnel_postings',
  'daily_dimensions',
  'daily_custom_events',
  'daily_custom_values',
  'custom_catalog',
];
for (const { name, erasure } of EVENT_PLANE_TABLE_LIST)
  if (erasure.kind === 'rewritten' && !REWRITTEN.includes(name))
    throw new Error(`${name} is declared rewritten by an erase, but no step of the erase rewrites it`);

/** rows keyed by the user, the table marking the user's commits last (see eraseUser) */
const USER_TABLES = EVENT_PLANE_TABLE_LIST.filter(({ erasure }) => erasure.kind === 'user')
  .sort((a, b) => Number(marksCommits(a)) - Number(marksCommits(b)))
  .map(({ name }) => name as DeletedTable);

function marksCommits(table: RollupTable): boolean {
  return table.erasure.kind === 'user' && table.erasure.marksCommits === true;
}

/** rows keyed by the user's sessions, with the columns they are matched on with the user's events */
const SESSION_TABLES = EVENT_PLANE_TABLE_LIST.flatMap(({ name, erasure }) =>
  erasure.kind === 'session' ? [{ name: name as DeletedTable, match: erasure.match }] : [],
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
 * at the start). The user's among them are deleted with their sessions' rows in the same statement, and their part of
 * the counts that carry text taken out (so an erase cut short never leaves sessions behind that no event leads to any
 * more, nor counts of events gone). A session is the user's when one of their events names it. `last` is where the
 * next step starts; null once the walk has passed the last event. The step answers the user's texts it met too.
 */
const WALK_STEP = `
WITH range AS (
  SELECT event_key, user_key, session_id, day, event_name, platform, locale, start_param FROM events
  WHERE app_id = {{app}} AND event_key > decode({{after}}, 'base64') ORDER BY event_key LIMIT {{rows}}
), mine AS (
  SELECT event_key, session_id, day, event_name, platform, locale, start_param FROM range
  WHERE user_key = decode({{user}}, 'base64')
), ${MINE_ROLLED_UP}, ${SESSION_TABLES.map(
  ({ name, match }) => `gone_${name} AS (
  DELETE FROM ${name} s USING (SELECT DISTINCT ${match.join(', ')} FROM mine) m
  WHERE s.app_id = {{app}} AND ${match.map((column) => `s.${column} = m.${column}`).join(' AND ')} RETURNING 1
)`,
).join(', ')}, ${COUNTS_WITHOUT_USER}, gone AS (
  DELETE FROM events e USING mine m WHERE e.app_id = {{app}} AND e.event_key = m.event_key RETURNING 1
)
SELECT (SELECT encode(event_key, 'base64') FROM range ORDER BY event_key DESC LIMIT 1) AS last,
       (SELECT count(*)::int FROM range) AS read,
       (SELECT count(*)::int FROM gone) AS events,
       ${SESSION_TABLES.map(({ name }) => `(SELECT count(*)::int FROM gone_${name}) AS ${name}`).join(', ')},
       ${WALK_TEXTS}`;

/** in the order the erase deletes them, which is the order it reports them in */
const noRows = (): ErasedRows => ({
  events: 0,
  app_users: 0,
  wallet_users: 0,
  verified_sessions: 0,
  daily_users: 0,
  daily_sessions: 0,
  funnel_postings: 0,
});

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
 * Last, the texts the walks met that no other user sent leave the rollups and the catalog.
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
  /** what the user sent themselves, met by the walks of every round */
  const texts = new GatheredTexts();

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
      type Step = { last: string | null; read: number; events: number; [table: string]: unknown } & FoundTexts;
      const [step] = (await retriedOnDeadlock(() =>
        sql.query<Step>(...named(WALK_STEP, { app: appId, user: key, after, rows: chunkRows })),
      )) as [Step];
      texts.add(step);
      deleted.events += step.events;
      for (const { name } of SESSION_TABLES) deleted[name] += step[name] as number;
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
  let complete = false;
  for (let round = 1; round <= maxRounds && !complete; round++) {
    await walkEvents();
    await walkPostings();
    complete = (await deleteUserRows()) === 0;
    await retriedOnDeadlock(() => sql.query(...named(DROP_EMPTIED, { app: appId })));
  }
  await dropTextsOfUser(sql, appId, userKey, texts.texts, chunkRows);
  return { deleted, complete };
}

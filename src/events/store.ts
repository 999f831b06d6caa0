// The event store: inserts accepted events and maintains rollups in the same statement; reads activity.
// Behind this interface a columnar engine could be added as a second implementation.
import crypto from 'node:crypto';
import { intArrayLiteral, Utf8Text, type SqlReader, type SqlRunner } from '../db/sql.ts';
import { dayNumberOf, isoDayOfNumber } from './days.ts';
import {
  CUSTOM_NAME_BITS,
  customEventsSql,
  customNameSql,
  NO_CUSTOM_NAMES,
  OTHER_SLOT,
  rollupText,
} from './custom-events.ts';
import { FUNNEL, FUNNEL_STEP_BITS, WALLET_CONNECTION_EVENT } from './funnel.ts';
import { BatchPostings, type BatchPostingParams, encodeRequestPostings, postingRowsSql } from './funnel-postings.ts';
import { BatchSummary, encodeRequestSummary } from './request-summary.ts';

export interface EventRow {
  appId: number;
  eventKey: Buffer;
  receivedAt: Date;
  occurredAt: Date;
  day: string;
  eventName: string;
  sessionId: string;
  userKey: Buffer;
  isPremium: boolean;
  isSuccess: boolean;
  platform: string | null;
  locale: string | null;
  startParam: string | null;
  props: Record<string, unknown>;
  /** the event's size as JSON text (characters), counted against the app's daily byte quota; 0 when not measured */
  bytes?: number;
}

export interface AppActivity {
  lastEventAt: Date | null;
  eventsTotal: number;
}

export interface RejectionRow {
  appId: number;
  at: Date;
  status: number;
  message: string;
  origin: string | null;
  /** what the owner is told beyond the spec's message (a quota reached, say); null or absent: nothing more */
  reason?: string | null;
  count: number;
}

/** events ready for one commit: rows already in the statement's form, as the durable log keeps them */
export interface EventBatch {
  /** a JSON array of rowValues() arrays, as UTF-8 bytes */
  rows: Buffer;
  appIds: Iterable<number>;
  /** events and bytes per app and UTC day of receipt, as [app id, 'YYYY-MM-DD', events, bytes] */
  usage: [number, string, number, number][];
  /** the events' users per day, as BatchSummary.usersJson() makes them */
  users: string;
  /** the events' custom events per day and name, as UTF-8 JSON: BatchSummary.customEventsJson() */
  customEvents: Buffer;
  /** the events' funnel postings, as BatchPostings.toParams() makes them */
  postings: BatchPostingParams;
  /** the ingest node whose log holds the batch, and the log's last record in it: stored in the same commit */
  logOffset?: { node: string; through: number };
}

export interface EventStore {
  /** stores the rows not stored before (same app and event key) and counts them into the rollups */
  insert(rows: EventRow[]): Promise<number>;
  /** the same for a batch read from a node's durable log, with the log's offset in the same commit */
  insertBatch(batch: EventBatch): Promise<number>;
  /** how far the store holds a node's log (0: nothing of it) */
  loadedThrough(node: string): Promise<number>;
  /** the apps' activity, in one read however many apps (a list of every app stays one read) */
  activities(appIds: readonly number[]): Promise<Map<number, AppActivity>>;
  addRejections(rows: RejectionRow[]): Promise<void>;
  recentRejections(appId: number, limit: number): Promise<RejectionRow[]>;
  /** each app's last refused request (the apps without one are absent), in one read */
  lastRejections(appIds: readonly number[]): Promise<Map<number, RejectionRow>>;
}

/** rejections kept per app: enough to explain "No data", small enough to never matter */
const REJECTIONS_KEPT = 50;

/**
 * The tables holding an app's events and rollups. They have no foreign key to apps (a per-row check was a
 * quarter of the insert's cost): deleting an app deletes from each of them, after the app row.
 */
export const EVENT_PLANE_TABLES = [
  'events',
  'daily_event_counts',
  'daily_users',
  'app_users',
  'daily_sessions',
  'daily_app_stats',
  'daily_dimensions',
  'daily_funnel_sessions',
  'daily_app_usage',
  'app_activity',
  'wallet_users',
  'custom_catalog',
  'daily_custom_events',
  'daily_custom_values',
  'funnel_postings',
] as const;

// One statement: rows travel as a single JSON parameter (same on PGlite and PostgreSQL; typed text and sent as
// bytes, so the service never makes a string of a batch read from the log), each row an array
// in the order of rowValues() with times as epoch milliseconds: about half the text of objects with named
// fields read by jsonb_to_recordset, and less of PostgreSQL's CPU per event. The app ids come as a second
// parameter (taken from the rows, the batch would be read twice and materialised), and so do the
// daily quotas' counts: one row per app and UTC day of receipt (events and bytes, duplicates included, as
// the quota admitted them). Duplicates are skipped by the primary key, and only rows really inserted reach the
// counts: the per-user rows, custom events and funnel postings come from what ingest gathered ($6 to $9) when every
// event of the batch is new, from the rows inserted otherwise. Rollup rows are
// written in key order so concurrent commits from several nodes lock them in the same order (event keys compared
// bytewise, COLLATE "C", whatever the database's locale: only the order's consistency matters). Rows of an
// app that no longer exists are skipped. Each app written for is locked (FOR KEY SHARE, the lock a foreign
// key check takes) until the commit, so an app deletion waits for the commits in flight and then deletes
// their rows too; a commit after the deletion finds no app and stores nothing.
/**
 * An app_users upsert's row (excluded) holds an earlier first event than the stored one (u); a user stored without
 * the time of their first event is compared by day
 */
const EARLIER_FIRST = `(excluded.first_at < u.first_at OR (u.first_at IS NULL AND excluded.first_day < u.first_day))`;

/**
 * The batch's funnel postings: those ingest made ($7: [app id, step, day, start, length] of each row, whose entries
 * are the bytes of $9 from start on) when every event of the batch is new, else those of the events really inserted,
 * so an event's posting is stored once, with the time stored
 */
const POSTINGS = `, postings AS (
  INSERT INTO funnel_postings (app_id, step, day, entries)
  SELECT (p->>0)::int, p->>1, (p->>2)::date, substring($9::bytea FROM (p->>3)::int + 1 FOR (p->>4)::int)
  FROM jsonb_array_elements($7::jsonb) AS p
  WHERE (SELECT all_new FROM batch_new) AND (p->>0)::int IN (SELECT id FROM live_apps)
  UNION ALL${postingRowsSql('fresh_rows e')}
)`;

/**
 * The batch's users per day: those ingest gathered ($6, src/events/request-summary.ts) when every event of the batch
 * is new, else those of the events really inserted: their first event's time and launch attributes, their custom
 * events' names and whether they completed a wallet connection.
 */
const BATCH_USERS = `batch_users AS (
  SELECT (u->>0)::int AS app_id, (u->>1)::date AS day, decode(u->>2, 'base64') AS user_key,
         to_timestamp((u->>3)::float8 / 1000) AS first_at, u->>4 AS platform, u->>5 AS locale, (u->>6)::bool AS is_premium,
         u->>7 AS start_param, u->>8 AS names, (u->>9)::bool AS wallet
  FROM jsonb_array_elements($6::jsonb) AS u
  WHERE (SELECT all_new FROM batch_new) AND (u->>0)::int IN (SELECT id FROM live_apps)
  UNION ALL
  SELECT app_id, day, user_key, min(occurred_at), (array_agg(platform ORDER BY occurred_at))[1],
         (array_agg(locale ORDER BY occurred_at))[1], (array_agg(is_premium ORDER BY occurred_at))[1],
         (array_agg(start_param ORDER BY occurred_at))[1],
         coalesce(jsonb_agg(DISTINCT ${customNameSql("props->'custom_data'")}) FILTER (WHERE event_name = 'custom-event'), '[]')::text,
         bool_or(event_name = '${WALLET_CONNECTION_EVENT}')
  FROM fresh_rows GROUP BY app_id, day, user_key
)`;

/**
 * The rows of the batch really inserted, its parameter parsed again only when some of its events were not new (sent
 * before, twice in the batch, or of a deleted app); a row sent twice is the one whose time was stored
 */
const FRESH_ROWS = `batch_new AS (
  SELECT (SELECT count(*) FROM inserted) = (SELECT coalesce(sum((u->>2)::bigint), 0) FROM jsonb_array_elements($3::jsonb) AS u
                                            WHERE (u->>0)::int IN (SELECT id FROM live_apps)) AS all_new
), fresh_rows AS (
  SELECT DISTINCT ON (i.app_id, i.event_key) i.app_id, i.event_key, i.occurred_at, i.day, i.event_name, i.session_id,
         decode(b.user_key, 'base64') AS user_key, i.is_premium, i.platform, i.locale, i.start_param, b.props
  FROM batch b
  JOIN inserted i ON i.app_id = b.app_id AND i.event_key = decode(b.event_key, 'base64') AND i.occurred_at = b.occurred_at
  WHERE NOT (SELECT all_new FROM batch_new)
  ORDER BY i.app_id, i.event_key
)`;

/** users per day and per app; with the insights: their first events' launch attributes, wallets and custom events */
function userRollups(insights: boolean): string {
  if (!insights)
    return `${BATCH_USERS}, new_users AS (
  INSERT INTO daily_users (app_id, day, user_key)
  SELECT app_id, day, user_key FROM batch_users ORDER BY 1, 2, 3
  ON CONFLICT DO NOTHING RETURNING app_id, day, user_key
), last_seen AS (
  INSERT INTO app_users AS u (app_id, user_key, last_day, first_day)
  SELECT app_id, user_key, max(day), min(day) FROM new_users GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (app_id, user_key) DO UPDATE SET last_day = excluded.last_day WHERE u.last_day < excluded.last_day
)`;
  return `${BATCH_USERS}, name_lists AS (
  -- the lists of custom event names the batch's users have, each once: a batch's users mostly share a few
  SELECT DISTINCT app_id, names FROM batch_users
), ${customEventsSql()}, name_bits AS (
  -- each list's names as bits, as text by the app and the list (NULL: no name)
  SELECT jsonb_object_agg(l.app_id || ' ' || l.names,
           (SELECT bit_or(set_bit(${NO_CUSTOM_NAMES}, coalesce(((SELECT slots FROM name_map) ->> (l.app_id || ' ' || n.name))::int, ${OTHER_SLOT}), 1))
            FROM jsonb_array_elements_text(l.names::jsonb) AS n(name))::text) AS bits
  FROM name_lists l
), seen_users AS (
  -- each user's days of the batch, with the names of their custom events as bits (NULL: none)
  INSERT INTO daily_users AS d (app_id, day, user_key, custom_names)
  SELECT app_id, day, user_key, ((SELECT bits FROM name_bits) ->> (b.app_id || ' ' || b.names))::bit(${CUSTOM_NAME_BITS})
  FROM batch_users b ORDER BY app_id, day, user_key
  -- a day already counted gains the names it had not had yet (the conflicting row is locked either way, as the
  -- app's other rollup rows are by every commit for it)
  ON CONFLICT (app_id, day, user_key) DO UPDATE SET custom_names = coalesce(d.custom_names, ${NO_CUSTOM_NAMES}) | excluded.custom_names
  WHERE excluded.custom_names IS NOT NULL
    AND (d.custom_names IS NULL OR d.custom_names | excluded.custom_names <> d.custom_names)
  -- a row the insert made has no xmax; one it updated has the updating transaction's
  RETURNING app_id, day, user_key, xmax = 0 AS fresh
), new_users AS (
  SELECT app_id, day, user_key FROM seen_users WHERE fresh
), user_firsts AS (
  -- each user's first event of the batch, with its launch attributes (cut where they are stored, per user)
  SELECT DISTINCT ON (app_id, user_key) app_id, user_key, day, first_at AS occurred_at, platform, locale, is_premium, start_param
  FROM batch_users ORDER BY app_id, user_key, first_at
), user_changes AS (
  -- per user: the first event of the batch and the last of the days counted for the first time now (or NULL)
  SELECT app_id, user_key, min(first_day) AS first_day, min(first_at) AS first_at, max(platform) AS platform,
         max(locale) AS locale, bool_or(is_premium) AS is_premium, max(start_param) AS start_param,
         max(new_day) AS last_day
  FROM (SELECT app_id, user_key, day AS first_day, occurred_at AS first_at, platform, locale, is_premium, start_param,
               NULL::date AS new_day
        FROM user_firsts
        UNION ALL
        SELECT app_id, user_key, NULL, NULL, NULL, NULL, NULL, NULL, day FROM new_users) AS changes
  GROUP BY 1, 2
), last_seen AS (
  -- a user is first seen with the attributes of their first event, also when it arrives after later ones (a late
  -- event moves their first day, and their cohort, earlier)
  INSERT INTO app_users AS u (app_id, user_key, last_day, first_day, first_at, platform, locale, is_premium, campaign)
  SELECT app_id, user_key, coalesce(last_day, first_day), first_day, first_at, ${rollupText('platform')},
         ${rollupText('locale')}, is_premium, ${rollupText('start_param')}
  FROM user_changes c
  -- users with a day counted for the first time, and all but those this statement's snapshot shows first seen no
  -- later (one probe each; their rows are not locked): a first event only moves earlier, so what the snapshot shows
  -- holds, while a row a concurrent commit adds is not in it and gets to the upsert, which sees it
  WHERE last_day IS NOT NULL
     OR NOT EXISTS (SELECT 1 FROM app_users x WHERE x.app_id = c.app_id AND x.user_key = c.user_key
                    AND (x.first_at <= c.first_at OR (x.first_at IS NULL AND x.first_day <= c.first_day)))
  ORDER BY 1, 2
  ON CONFLICT (app_id, user_key) DO UPDATE SET
    last_day = greatest(u.last_day, excluded.last_day),
    first_day = CASE WHEN ${EARLIER_FIRST} THEN excluded.first_day ELSE u.first_day END,
    first_at = CASE WHEN ${EARLIER_FIRST} THEN excluded.first_at ELSE u.first_at END,
    platform = CASE WHEN ${EARLIER_FIRST} THEN excluded.platform ELSE u.platform END,
    locale = CASE WHEN ${EARLIER_FIRST} THEN excluded.locale ELSE u.locale END,
    is_premium = CASE WHEN ${EARLIER_FIRST} THEN excluded.is_premium ELSE u.is_premium END,
    campaign = CASE WHEN ${EARLIER_FIRST} THEN excluded.campaign ELSE u.campaign END
  WHERE u.last_day < excluded.last_day OR ${EARLIER_FIRST}
), wallets AS (
  INSERT INTO wallet_users AS w (app_id, user_key, first_day)
  SELECT app_id, user_key, min(day) FROM batch_users WHERE wallet GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (app_id, user_key) DO UPDATE SET first_day = excluded.first_day WHERE w.first_day > excluded.first_day
)`;
}

/**
 * The event insert, with the insights' aggregates or (for measuring what they cost) without them: then users keep
 * no launch attributes, and wallet users and custom events are not counted.
 */
export const insertEventsSql = (insights: boolean) => `
WITH batch AS NOT MATERIALIZED (
  -- read by the events' insert, and again only when the batch holds events stored before (fresh_rows)
  SELECT (r->>0)::int AS app_id, r->>1 AS event_key, to_timestamp((r->>2)::float8 / 1000) AS received_at,
         to_timestamp((r->>3)::float8 / 1000) AS occurred_at, (r->>4)::date AS day, r->>5 AS event_name,
         (r->>6)::uuid AS session_id, r->>7 AS user_key, (r->>8)::bool AS is_premium, (r->>9)::bool AS is_success,
         r->>10 AS platform, r->>11 AS locale, r->>12 AS start_param, r->13 AS props
  FROM jsonb_array_elements($1::text::jsonb) AS r
), live_apps AS (
  SELECT id FROM apps WHERE id = ANY($2::int[]) ORDER BY id FOR KEY SHARE
), inserted AS (
  INSERT INTO events (app_id, event_key, received_at, occurred_at, day, event_name, session_id, user_key,
                      is_premium, is_success, platform, locale, start_param, props)
  SELECT app_id, decode(event_key, 'base64'), received_at, occurred_at, day, event_name, session_id,
         decode(user_key, 'base64'), is_premium, is_success, platform, locale, start_param, props
  FROM batch WHERE app_id IN (SELECT id FROM live_apps) ORDER BY app_id, event_key COLLATE "C"
  ON CONFLICT (app_id, event_key) DO NOTHING
  RETURNING app_id, event_key, day, event_name, session_id, received_at, occurred_at, is_premium, platform, locale,
            start_param
), ${FRESH_ROWS}, counts AS (
  INSERT INTO daily_event_counts AS c (app_id, day, event_name, events)
  SELECT app_id, day, event_name, count(*) FROM inserted GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (app_id, day, event_name) DO UPDATE SET events = c.events + excluded.events
), ${userRollups(insights)}, session_starts AS (
  SELECT DISTINCT ON (app_id, session_id) app_id, day, session_id, platform, locale, start_param
  FROM inserted ORDER BY app_id, session_id, day, occurred_at
), new_sessions AS (
  -- a session already counted (on an earlier day, or by an earlier commit) is not counted again
  INSERT INTO daily_sessions (app_id, day, session_id, platform, locale, start_param)
  SELECT app_id, day, session_id, ${rollupText('platform')}, ${rollupText('locale')}, ${rollupText('start_param')}
  FROM session_starts ORDER BY app_id, session_id
  ON CONFLICT DO NOTHING RETURNING app_id, day, session_id, platform, locale, start_param
), dimensions AS (
  -- from the returned rows alone: a join back to session_starts was planned as a nested loop over two
  -- CTEs (estimated at one row each), quadratic in the batch
  INSERT INTO daily_dimensions AS d (app_id, day, dimension, value, sessions)
  SELECT n.app_id, n.day, x.dimension, x.value, count(*)
  FROM new_sessions n
  CROSS JOIN LATERAL (VALUES ('platform', n.platform), ('locale', n.locale), ('start_param', n.start_param)) AS x(dimension, value)
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (app_id, day, dimension, value) DO UPDATE SET sessions = d.sessions + excluded.sessions
), funnel AS (
  INSERT INTO daily_funnel_sessions AS f (app_id, day, session_id, steps)
  SELECT app_id, day, session_id,
         bit_or(${FUNNEL_STEP_BITS})::smallint
  FROM inserted
  WHERE event_name IN (${FUNNEL.map((name) => `'${name}'`).join(', ')})
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (app_id, day, session_id) DO UPDATE SET steps = f.steps | excluded.steps
), stats AS (
  INSERT INTO daily_app_stats AS s (app_id, day, users, sessions)
  SELECT app_id, day, sum(users), sum(sessions) FROM (
    SELECT app_id, day, 1 AS users, 0 AS sessions FROM new_users
    UNION ALL SELECT app_id, day, 0, 1 FROM new_sessions
  ) AS fresh GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (app_id, day) DO UPDATE SET users = s.users + excluded.users, sessions = s.sessions + excluded.sessions
), activity AS (
  INSERT INTO app_activity AS a (app_id, last_event_at, events_total)
  SELECT app_id, max(received_at), count(*) FROM inserted GROUP BY 1 ORDER BY 1
  ON CONFLICT (app_id) DO UPDATE SET last_event_at = greatest(a.last_event_at, excluded.last_event_at),
                                     events_total = a.events_total + excluded.events_total
), usage AS (
  INSERT INTO daily_app_usage AS q (app_id, day, events, bytes)
  SELECT (u->>0)::int, (u->>1)::date, (u->>2)::bigint, (u->>3)::bigint FROM jsonb_array_elements($3::jsonb) AS u
  WHERE (u->>0)::int IN (SELECT id FROM live_apps) ORDER BY 1, 2
  ON CONFLICT (app_id, day) DO UPDATE SET events = q.events + excluded.events, bytes = q.bytes + excluded.bytes
)${insights ? POSTINGS : ''}, log_offset AS (
  INSERT INTO log_offsets AS o (node, loaded_through, updated_at)
  SELECT $4::text, $5::bigint, now() WHERE $4::text IS NOT NULL
  ON CONFLICT (node) DO UPDATE SET loaded_through = greatest(o.loaded_through, excluded.loaded_through), updated_at = now()
)
SELECT count(*)::int AS inserted FROM inserted`;

/** a row as the event insert reads it: values by position, times in epoch ms, keys in base64 */
export function rowValues(row: EventRow): unknown[] {
  return [
    row.appId,
    row.eventKey.toString('base64'),
    row.receivedAt.getTime(),
    row.occurredAt.getTime(),
    row.day,
    row.eventName,
    row.sessionId,
    row.userKey.toString('base64'),
    row.isPremium,
    row.isSuccess,
    row.platform,
    row.locale,
    row.startParam,
    row.props,
  ];
}

/** a row as rowValues() wrote it */
export function rowOfValues(values: unknown[]): EventRow {
  const [appId, eventKey, receivedAt, occurredAt, day, eventName, sessionId, userKey] = values as [
    number,
    string,
    number,
    number,
    string,
    string,
    string,
    string,
  ];
  return {
    appId,
    eventKey: Buffer.from(eventKey, 'base64'),
    receivedAt: new Date(receivedAt),
    occurredAt: new Date(occurredAt),
    day,
    eventName,
    sessionId,
    userKey: Buffer.from(userKey, 'base64'),
    isPremium: values[8] as boolean,
    isSuccess: values[9] as boolean,
    platform: values[10] as string | null,
    locale: values[11] as string | null,
    startParam: values[12] as string | null,
    props: values[13] as Record<string, unknown>,
  };
}

/** the event insert's parameters for a batch ($7 to $9, the postings and custom events, are read only with the insights) */
export function insertParams(batch: EventBatch, insights = true): unknown[] {
  const params: unknown[] = [
    new Utf8Text(batch.rows),
    intArrayLiteral(new Set(batch.appIds)),
    JSON.stringify(batch.usage),
    batch.logOffset?.node ?? null,
    batch.logOffset?.through ?? null,
    batch.users,
  ];
  if (insights) params.push(batch.postings.groups, new Utf8Text(batch.customEvents), batch.postings.entries);
  return params;
}

/** the rows' events and bytes per app and UTC day of receipt */
function dailyUsage(rows: EventRow[]): [number, string, number, number][] {
  const usage = new Map<string, [number, number, number, number]>();
  let entry: [number, number, number, number] | undefined;
  for (const row of rows) {
    const day = dayNumberOf(row.receivedAt.getTime());
    // a request's rows come one after another with the same app and time
    if (entry?.[0] !== row.appId || entry[1] !== day) {
      const key = `${row.appId}:${day}`;
      entry = usage.get(key);
      if (!entry) usage.set(key, (entry = [row.appId, day, 0, 0]));
    }
    entry[2]++;
    entry[3] += row.bytes ?? 0;
  }
  return [...usage.values()].map(([appId, day, events, bytes]) => [appId, isoDayOfNumber(day), events, bytes]);
}

/**
 * The event insert runs as a named statement, planned once per connection: planning this statement costs more
 * than running it for a small batch, on PostgreSQL and more so on PGlite. The name carries a hash of the text,
 * so a changed statement is prepared anew.
 */
const statementName = (text: string) =>
  `tma_insert_events_${crypto.createHash('sha256').update(text).digest('hex').slice(0, 12)}`;

export interface SqlEventStoreOptions {
  /** maintain the insights' aggregates (default); false only to measure what they cost */
  insights?: boolean;
  /** what the surfaces read (an app's activity, its refusals): within the read budget (default: the runner) */
  reads?: SqlReader;
}

export class SqlEventStore implements EventStore {
  private readonly insights: boolean;
  private readonly insertSql: string;
  private readonly insertName: string;
  private readonly reads: SqlReader;

  constructor(
    private readonly sql: SqlRunner,
    options: SqlEventStoreOptions = {},
  ) {
    this.insights = options.insights ?? true;
    this.reads = options.reads ?? sql;
    this.insertSql = insertEventsSql(this.insights);
    this.insertName = statementName(this.insertSql);
  }

  async insert(rows: EventRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    const postings = new BatchPostings();
    const summary = new BatchSummary();
    const byApp = new Map<number, EventRow[]>();
    for (const row of rows) byApp.get(row.appId)?.push(row) ?? byApp.set(row.appId, [row]);
    for (const [appId, appRows] of byApp) {
      postings.add(appId, encodeRequestPostings(appRows));
      summary.add(appId, encodeRequestSummary(appRows));
    }
    return this.insertBatch({
      rows: Buffer.from(JSON.stringify(rows.map(rowValues))),
      appIds: new Set(rows.map((row) => row.appId)),
      usage: dailyUsage(rows),
      users: summary.usersJson(),
      customEvents: summary.customEventsJson(),
      postings: postings.toParams(),
    });
  }

  async insertBatch(batch: EventBatch): Promise<number> {
    const [result] = await this.sql.query<{ inserted: number }>(this.insertSql, insertParams(batch, this.insights), {
      name: this.insertName,
    });
    return result?.inserted ?? 0;
  }

  async loadedThrough(node: string): Promise<number> {
    const [row] = await this.sql.query<{ through: number }>(
      `SELECT loaded_through::float8 AS through FROM log_offsets WHERE node = $1`,
      [node],
    );
    return row?.through ?? 0;
  }

  async activities(appIds: readonly number[]): Promise<Map<number, AppActivity>> {
    const rows = await this.reads.query<{ app_id: number; last_event_at: Date; events_total: number }>(
      `SELECT app_id, last_event_at, events_total::float8 AS events_total FROM app_activity WHERE app_id = ANY($1::int[])`,
      [intArrayLiteral(new Set(appIds))],
    );
    const found = new Map(rows.map((row) => [row.app_id, row]));
    return new Map(
      appIds.map((appId) => {
        const row = found.get(appId);
        return [appId, { lastEventAt: row?.last_event_at ?? null, eventsTotal: row?.events_total ?? 0 }];
      }),
    );
  }

  async addRejections(rows: RejectionRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.sql.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO rejections (app_id, at, status, message, origin, reason, count)
         SELECT app_id, at, status, message, origin, reason, count FROM jsonb_to_recordset($1::jsonb)
           AS r(app_id int, at timestamptz, status int, message text, origin text, reason text, count int)`,
        [JSON.stringify(rows.map((row) => ({ ...row, app_id: row.appId, reason: row.reason ?? null })))],
      );
      await tx.query(
        `DELETE FROM rejections r USING (
           SELECT id, row_number() OVER (PARTITION BY app_id ORDER BY at DESC, id DESC) AS rank
           FROM rejections WHERE app_id = ANY($1::int[])) AS ranked
         WHERE r.id = ranked.id AND ranked.rank > ${REJECTIONS_KEPT}`,
        [intArrayLiteral(new Set(rows.map((row) => row.appId)))],
      );
    });
  }

  async recentRejections(appId: number, limit: number): Promise<RejectionRow[]> {
    const rows = await this.reads.query<{
      at: Date;
      status: number;
      message: string;
      origin: string | null;
      reason: string | null;
      count: number;
    }>(
      `SELECT at, status, message, origin, reason, count FROM rejections WHERE app_id = $1 ORDER BY at DESC, id DESC LIMIT $2`,
      [appId, limit],
    );
    return rows.map((row) => ({ appId, ...row }));
  }

  async lastRejections(appIds: readonly number[]): Promise<Map<number, RejectionRow>> {
    const rows = await this.reads.query<RejectionRow & { app_id: number }>(
      `SELECT DISTINCT ON (app_id) app_id, at, status, message, origin, reason, count FROM rejections
       WHERE app_id = ANY($1::int[]) ORDER BY app_id, at DESC, id DESC`,
      [intArrayLiteral(new Set(appIds))],
    );
    return new Map(rows.map(({ app_id, ...row }) => [app_id, { ...row, appId: app_id }]));
  }
}

// The event insert: one statement per commit that stores a batch's new events, updates every rollup of ROLLUPS from
// the rows really inserted and records the node's log offset, so a crash replays at most the batch in flight.
import { type NamedValues, param } from '../../db/named-sql.ts';
import { intArrayLiteral, Utf8Text } from '../../db/sql.ts';
import { USAGE } from './batch-values.ts';
import { EVENT_COLUMN_NAMES, EVENT_TUPLE } from './event-columns.ts';
import { gatheringsOf, rollupsKept } from './rollups/index.ts';

/** events ready for one commit: rows already in the statement's form, as the durable log keeps them */
export interface EventBatch {
  /** a JSON array of encodeEventRow() arrays, as UTF-8 bytes */
  rows: Buffer;
  appIds: Iterable<number>;
  /** events and bytes per app and UTC day of receipt, as [app id, 'YYYY-MM-DD', events, bytes] (USAGE) */
  usage: [number, string, number, number][];
  /** the parameters of what the pre-aggregated rollups gathered (gatheringsOf: each gathering's values()) */
  gathered: NamedValues;
  /** the ingest node whose log holds the batch, and the log's last record in it: stored in the same commit */
  logOffset?: { node: string; through: number };
}

// One statement: rows travel as a single JSON parameter (same on PGlite and PostgreSQL; typed text and sent as
// bytes, so the service never makes a string of a batch read from the log), each row an array
// in the order of EVENT_COLUMNS with times as epoch milliseconds: about half the text of objects with named
// fields read by jsonb_to_recordset, and less of PostgreSQL's CPU per event. The app ids come as a second
// parameter (taken from the rows, the batch would be read twice and materialised), and so do the
// daily quotas' counts: one row per app and UTC day of receipt (events and bytes, duplicates included, as
// the quota admitted them). Duplicates are skipped by the primary key, and only rows really inserted reach the
// counts: the rollups that declare a pre-aggregation (src/events/write/rollups/) take what ingest
// gathered when every event of the batch is new, and compute from the rows inserted otherwise. Rollup rows are
// written in key order so concurrent commits from several nodes lock them in the same order. Rows of an
// app that no longer exists are skipped. Each app written for is locked (FOR KEY SHARE, the lock a foreign
// key check takes) until the commit, so an app deletion waits for the commits in flight and then deletes
// their rows too; a commit after the deletion finds no app and stores nothing.

/**
 * The rows of the batch really inserted, its parameter parsed again only when some of its events were not new (sent
 * before, twice in the batch, or of a deleted app); a row sent twice is the one whose time was stored
 */
const FRESH_ROWS = `batch_new AS (
  SELECT (SELECT count(*) FROM inserted) = (SELECT coalesce(sum(${USAGE.get('u', 'events')}), 0)
                                            FROM jsonb_array_elements(${param('usage')}::jsonb) AS u
                                            WHERE ${USAGE.get('u', 'app_id')} IN (SELECT id FROM live_apps)) AS all_new
), fresh_rows AS (
  SELECT DISTINCT ON (i.app_id, i.event_key) i.app_id, i.event_key, i.occurred_at, i.day, i.event_name, i.session_id,
         b.user_key, i.is_premium, i.platform, i.locale, i.start_param, b.props
  FROM batch b
  JOIN inserted i ON i.app_id = b.app_id AND i.event_key = b.event_key AND i.occurred_at = b.occurred_at
  WHERE NOT (SELECT all_new FROM batch_new)
  ORDER BY i.app_id, i.event_key
)`;

/**
 * The event insert, with the insights' rollups or (for measuring what they cost) without them: then users keep no
 * launch attributes, and wallet users, custom events and funnel postings are not kept.
 */
export const insertEventsSql = (insights: boolean) => `
WITH batch AS NOT MATERIALIZED (
  -- read by the events' insert, and again only when the batch holds events stored before (fresh_rows)
  SELECT ${EVENT_TUPLE.select('r')}
  FROM jsonb_array_elements(${param('rows')}::text::jsonb) AS r
), live_apps AS (
  SELECT id FROM apps WHERE id = ANY(${param('app_ids')}::int[]) ORDER BY id FOR KEY SHARE
), inserted AS (
  INSERT INTO events (${EVENT_COLUMN_NAMES})
  SELECT ${EVENT_COLUMN_NAMES}
  FROM batch WHERE app_id IN (SELECT id FROM live_apps) ORDER BY app_id, event_key
  ON CONFLICT (app_id, event_key) DO NOTHING
  RETURNING app_id, event_key, day, event_name, session_id, received_at, occurred_at, is_premium, platform, locale,
            start_param, user_key, launch_check, launch_day, launch_proof, sent_by_server
), ${[
  FRESH_ROWS,
  ...gatheringsOf(insights).flatMap((gathering) => (gathering.inputSql ? [gathering.inputSql] : [])),
  ...rollupsKept(insights).map((rollup) => rollup.sql(insights)),
].join(', ')}, log_offset AS (
  INSERT INTO log_offsets AS o (node, loaded_through, updated_at)
  SELECT ${param('log_node')}::text, ${param('log_through')}::bigint, now() WHERE ${param('log_node')}::text IS NOT NULL
  ON CONFLICT (node) DO UPDATE SET loaded_through = greatest(o.loaded_through, excluded.loaded_through), updated_at = now()
)
SELECT count(*)::int AS inserted FROM inserted`;

/** the event insert's named parameters for a batch */
export function insertValues(batch: EventBatch): NamedValues {
  return {
    rows: new Utf8Text(batch.rows),
    app_ids: intArrayLiteral(new Set(batch.appIds)),
    usage: JSON.stringify(batch.usage),
    log_node: batch.logOffset?.node ?? null,
    log_through: batch.logOffset?.through ?? null,
    ...batch.gathered,
  };
}

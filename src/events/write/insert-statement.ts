// The event insert: one statement per commit that stores a batch's new events, updates every rollup of ROLLUPS from
// the rows really inserted and records the node's log offset, so a crash replays at most the batch in flight.
import { type NamedValues, param } from '../../db/named-sql.ts';
import { intArrayLiteral, Utf8Text } from '../../db/sql.ts';
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
// the quota admitted them). A batch is stored whole or not at all: an event stored before (or twice in the batch)
// fails the statement on the events' primary key, and the event plane sends the batch again without it, its
// gatherings made anew (src/events/write/event-plane.ts), so what the pre-aggregated rollups
// (src/events/write/rollups/) gathered at ingest always describes exactly the rows inserted. Rollup rows are
// written in key order so concurrent commits from several nodes lock them in the same order. Rows of an
// app that no longer exists are skipped. Each app written for is locked (FOR KEY SHARE, the lock a foreign
// key check takes) until the commit, so an app deletion waits for the commits in flight and then deletes
// their rows too; a commit after the deletion finds no app and stores nothing.

/**
 * The event insert, with the insights' rollups or (for measuring what they cost) without them: then users keep no
 * launch attributes, and wallet users, custom events and funnel postings are not kept.
 */
export const insertEventsSql = (insights: boolean) => `
WITH batch AS NOT MATERIALIZED (
  SELECT ${EVENT_TUPLE.select('r')}
  FROM jsonb_array_elements(${param('rows')}::text::jsonb) AS r
), live_apps AS (
  SELECT id FROM apps WHERE id = ANY(${param('app_ids')}::int[]) ORDER BY id FOR KEY SHARE
), inserted AS (
  INSERT INTO events (${EVENT_COLUMN_NAMES})
  SELECT ${EVENT_COLUMN_NAMES}
  FROM batch WHERE app_id IN (SELECT id FROM live_apps) ORDER BY app_id, event_key
  RETURNING app_id, event_key, day, event_name, session_id, received_at, occurred_at, is_premium, platform, locale,
            start_param, user_key, launch_check, launch_day, launch_proof, sent_by_server
), ${[
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

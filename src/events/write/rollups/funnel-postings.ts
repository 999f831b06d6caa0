// Funnel postings: each step's events per app and day as a few binary rows per commit (src/events/write/funnel-posting-format.ts
// reads and writes their bytes), what a funnel of the owner's steps walks.
import { param } from '../../../db/named-sql.ts';
import { customNameSql, ROLLUP_TEXT_LENGTH } from '../../custom-events.ts';
import { DAY_MS } from '../../days.ts';
import { CUSTOM_STEP_PREFIX, encodeRequestPostings } from '../funnel-posting-format.ts';
import { BatchPostings, POSTING_GROUP } from '../batch-postings.ts';
import type { Gathering } from './gathering.ts';
import { beforeFirstKeptDay, defineRollup } from './rollup.ts';

/**
 * SQL: the name a funnel step finds an event by, over the events table's columns (alias: the events table's): its
 * event name, or for a custom event its own name after the prefix, as encodeRequestPostings() names its steps
 */
const stepNameSql = (alias = '') => {
  const at = alias ? `${alias}.` : '';
  return `(CASE WHEN ${at}event_name = 'custom-event' THEN '${CUSTOM_STEP_PREFIX}' || ${customNameSql(`${at}props->'custom_data'`)} ELSE ${at}event_name END)`;
};

/** SQL: a text as a chunk keeps it (2-byte length, UTF-8) */
const textBytes = (text: string) =>
  `int2send(octet_length(convert_to(${text}, 'UTF8'))::int2) || convert_to(${text}, 'UTF8')`;

/**
 * SQL: the postings of the events a source holds (a relation aliased e with the events table's columns, with its
 * conditions), one row per app, step and day, in the bytes encodeRequestPostings() writes
 */
export const postingRowsSql = (source: string) => `
SELECT app_id, step, day, string_agg(chunk, ''::bytea) AS entries
FROM (
  SELECT app_id, step, day,
         ${textBytes('platform')} || ${textBytes('locale')} || ${textBytes('campaign')}
           || CASE WHEN is_premium THEN '\\x01'::bytea ELSE '\\x00'::bytea END || user_key || uuid_send(session_id)
           || int4send(count(*)::int) || string_agg(entry, ''::bytea) AS chunk
  FROM (
    SELECT e.app_id, ${stepNameSql('e')} AS step, e.day, left(coalesce(e.platform, ''), ${ROLLUP_TEXT_LENGTH}) AS platform,
           left(coalesce(e.locale, ''), ${ROLLUP_TEXT_LENGTH}) AS locale,
           left(coalesce(e.start_param, ''), ${ROLLUP_TEXT_LENGTH}) AS campaign, e.is_premium, e.user_key, e.session_id,
           int4send(((extract(epoch FROM e.occurred_at) * 1000)::bigint - (e.day - DATE '1970-01-01')::bigint * ${DAY_MS})::int)
             || e.event_key AS entry
    FROM ${source}
  ) AS events
  GROUP BY app_id, step, day, platform, locale, campaign, is_premium, user_key, session_id
) AS chunks
GROUP BY app_id, step, day`;

/** SQL: stores the postings of the events the condition keeps (events aliased e): to rebuild them (bench/rollups.ts) */
export const postingsFromEvents = (condition: string) =>
  `INSERT INTO funnel_postings (app_id, step, day, entries)${postingRowsSql(`events e WHERE ${condition}`)}`;

/**
 * The batch's funnel postings: those ingest made (posting_groups: POSTING_GROUP arrays, each row's entries the bytes
 * of posting_entries from its start on) when every event of the batch is new, else those of the events really inserted,
 * so an event's posting is stored once, with the time stored
 */
const POSTINGS = `postings AS (
  INSERT INTO funnel_postings (app_id, step, day, entries)
  SELECT ${POSTING_GROUP.get('p', 'app_id')}, ${POSTING_GROUP.get('p', 'step')}, ${POSTING_GROUP.get('p', 'day')},
         substring(${param('posting_entries')}::bytea FROM ${POSTING_GROUP.get('p', 'start')} + 1 FOR ${POSTING_GROUP.get('p', 'length')})
  FROM jsonb_array_elements(${param('posting_groups')}::jsonb) AS p
  WHERE (SELECT all_new FROM batch_new) AND ${POSTING_GROUP.get('p', 'app_id')} IN (SELECT id FROM live_apps)
  UNION ALL${postingRowsSql('fresh_rows e')}
)`;

/** each request's funnel postings: the section "postings" of its log record */
const FUNNEL_POSTING_GATHERING: Gathering = {
  section: 'postings',
  encode: (rows) => encodeRequestPostings(rows),
  batch: () => new BatchPostings(),
  pays:
    'the service ingest ratio of the custom-heavy mix (stored, with the insights / without) went from 0.76 to 1.01 × on ' +
    'PostgreSQL and from 0.71 to 0.85 × on PGlite with the request summaries and funnel postings made at ingest ' +
    '(bench/insights-load.ts; docs/bench-notes/2026-11.md, "Insights on funnel postings and request summaries")',
};

export const FUNNEL_POSTINGS = defineRollup({
  name: 'funnel postings',
  tables: [
    {
      // an event is before the first kept day exactly when its day is
      name: 'funnel_postings',
      keyedBy: 'day',
      retention: { kind: 'deleted', when: [beforeFirstKeptDay('day')] },
      erasure: { kind: 'rewritten', how: "the user's chunks are taken out of the rows" },
    },
  ],
  sql: () => POSTINGS,
  insightsOnly: true,
  preAggregated: FUNNEL_POSTING_GATHERING,
  readBy: ['src/events/read/funnel-reader.ts'],
});

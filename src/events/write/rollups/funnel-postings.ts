// Funnel postings: each step's events per app and day as a few binary rows per commit (src/events/write/funnel-posting-format.ts
// reads and writes their bytes), what a funnel of the owner's steps walks.
import { param } from '../../../db/named-sql.ts';
import { encodeRequestPostings } from '../funnel-posting-format.ts';
import { BatchPostings, POSTING_GROUP } from '../batch-postings.ts';
import type { Gathering } from './gathering.ts';
import { beforeFirstKeptDay, defineRollup } from './rollup.ts';

/**
 * SQL: stores postings rows as BatchPostings.toParams() gives them, `groups` and `entries` the SQL of its two values
 * (groups: POSTING_GROUP arrays, each row's entries the bytes of entries from its start on), rows of the groups `p`
 */
export const insertPostingsSql = (
  groups: string,
  entries: string,
) => `INSERT INTO funnel_postings (app_id, step, day, entries)
  SELECT ${POSTING_GROUP.get('p', 'app_id')}, ${POSTING_GROUP.get('p', 'step')}, ${POSTING_GROUP.get('p', 'day')},
         substring(${entries}::bytea FROM ${POSTING_GROUP.get('p', 'start')} + 1 FOR ${POSTING_GROUP.get('p', 'length')})
  FROM jsonb_array_elements(${groups}::jsonb) AS p`;

/** the batch's funnel postings, as ingest made them, of the apps that still exist */
const POSTINGS = `postings AS (
  ${insertPostingsSql(param('posting_groups'), param('posting_entries'))}
  WHERE ${POSTING_GROUP.get('p', 'app_id')} IN (SELECT id FROM live_apps)
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

// The rollups the event insert keeps, in the order of its statement (a rollup reads the CTEs of those before it).
// Everything that touches the event plane's tables is derived from this list: the insert statement, the purge of a
// deleted app, the retention purge, the erasure of a user, and the sections of a request's log record that the
// pre-aggregated rollups gather. Adding a rollup: a migration, its file, one line here.
import { ACTIVITY } from './activity.ts';
import { APP_STATS } from './app-stats.ts';
import { CUSTOM_EVENTS } from './custom-events.ts';
import { DIMENSIONS } from './dimensions.ts';
import { EVENT_COUNTS } from './event-counts.ts';
import { FUNNEL_POSTINGS } from './funnel-postings.ts';
import { LAUNCHES } from './launches.ts';
import type { Gathering } from './gathering.ts';
import type { Rollup, RollupTable } from './rollup.ts';
import { SESSIONS } from './sessions.ts';
import { DAILY_USAGE } from './usage.ts';
import { USERS } from './users.ts';

/** the rollups with their tables' literal names and rules (EventPlaneTable) */
const DECLARED_ROLLUPS = [
  EVENT_COUNTS,
  CUSTOM_EVENTS,
  USERS,
  SESSIONS,
  DIMENSIONS,
  APP_STATS,
  ACTIVITY,
  DAILY_USAGE,
  FUNNEL_POSTINGS,
  LAUNCHES,
] as const satisfies readonly Rollup[];

export const ROLLUPS: readonly Rollup[] = DECLARED_ROLLUPS;

/** the rollups a store keeps: all of them with the insights, else those not kept only for the insights */
export const rollupsKept = (insights: boolean): readonly Rollup[] =>
  ROLLUPS.filter((rollup) => insights || !rollup.insightsOnly);

/** what the rollups a store keeps gather at ingest, each once, in the order of ROLLUPS */
export const gatheringsOf = (insights: boolean): readonly Gathering[] => [
  ...new Set(rollupsKept(insights).flatMap((rollup) => (rollup.preAggregated ? [rollup.preAggregated] : []))),
];

/**
 * The table the rollups are made from. An event's key starts with the client's time (src/events/request/pseudonym.ts), its
 * day is that time's when the service trusted it, else the time of receipt; no index has the day, so two index ranges
 * cover every old event: keys before the first kept day (trusted client times, and receipts without one), and
 * receipts before it.
 */
export const EVENTS_TABLE = {
  name: 'events',
  keyedBy: 'user',
  retention: {
    kind: 'deleted',
    when: [
      `t.event_key < decode({{first_kept_key}}, 'hex') AND t.day < {{first_kept_day}}::date`,
      `t.received_at < {{first_kept_at}}::timestamptz AND t.day < {{first_kept_day}}::date`,
    ],
  },
  erasure: { kind: 'rewritten', how: "the user's events are deleted by a walk over the app's events" },
} as const satisfies RollupTable;

/** a table of the event plane as declared, with its literal name and rules */
export type EventPlaneTable = typeof EVENTS_TABLE | (typeof DECLARED_ROLLUPS)[number]['tables'][number];

/** every table of the event plane, events first, in the order of ROLLUPS */
export const EVENT_PLANE_TABLE_LIST: readonly EventPlaneTable[] = [
  EVENTS_TABLE,
  ...DECLARED_ROLLUPS.flatMap((rollup): readonly EventPlaneTable[] => rollup.tables),
];

/**
 * The tables holding an app's events and rollups. They have no foreign key to apps (a per-row check was a quarter of
 * the insert's cost): deleting an app deletes from each of them, after the app row.
 */
export const EVENT_PLANE_TABLES: readonly string[] = EVENT_PLANE_TABLE_LIST.map((table) => table.name);

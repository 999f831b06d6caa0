// What a rollup declares: its tables (what a row is per, what the retention purge and erasing a user do to it), the
// SQL it adds to the event insert over the batch's rows really inserted, and where it is read.
import type { Gathering } from './gathering.ts';

/**
 * What erasing a user does to a table's rows: `kept`, anonymous counts that keep counting the user; `user`, the rows
 * keyed by the user's key are deleted (`marksCommits`: the row every commit of the user's events writes, deleted last,
 * so an erase sees a commit that landed meanwhile); `session`, the rows of the user's sessions are deleted, matched
 * with the user's events on `match`; `rewritten`, the user's bytes are taken out by src/events/lifecycle/user-erasure.ts,
 * which has a step for each such table.
 */
export type ErasureRule =
  | { kind: 'kept' }
  | { kind: 'user'; marksCommits?: boolean }
  | { kind: 'session'; match: readonly ('day' | 'session_id')[] }
  | { kind: 'rewritten'; how: string };

/**
 * What the retention purge does to a table's rows of days before an app's first kept day: `kept`, anonymous counts
 * that stay so old periods still show their totals; otherwise the condition (over the row `t` and the named
 * parameters first_kept_day, first_kept_at, first_kept_key) of the rows it deletes, one chunked DELETE each.
 */
export type RetentionRule = { kind: 'kept' } | { kind: 'deleted'; when: readonly string[] };

export interface RollupTable {
  name: string;
  /** what one row is per, within its app: a day (and more of its keys), a user, a session, or the app itself */
  keyedBy: 'day' | 'user' | 'session' | 'app';
  retention: RetentionRule;
  erasure: ErasureRule;
}

export interface Rollup {
  name: string;
  tables: readonly RollupTable[];
  /**
   * Its CTEs in the event insert, each starting with its name (`name AS (…)`), joined with commas. They read the
   * statement's inputs (src/events/write/insert-statement.ts: inserted, live_apps), the
   * inputs of the gatherings (batch_users, src/events/write/request-summary.ts) and the CTEs of the rollups before it
   * in ROLLUPS that `reads` names. `insights`: whether the store keeps the insights.
   */
  sql(insights: boolean): string;
  /** the CTEs of rollups before it in ROLLUPS its SQL reads (test/events/write/rollup-order.test.ts checks the order) */
  reads?: readonly string[];
  /** kept only with the insights (a store without them, measured in bench/insights-load.ts, leaves it out) */
  insightsOnly?: boolean;
  /**
   * what it gathers at ingest instead of computing it in the statement from every event (a batch holding an event
   * stored before is sent again without it, gathered anew: src/events/write/event-plane.ts)
   */
  preAggregated?: Gathering;
  /** where its tables are read */
  readBy: readonly string[];
}

/**
 * A rollup as its file declares it: checked as a Rollup, its tables' names and rules kept as literal types, so what
 * derives from them (the rows an erase counts, src/events/lifecycle/user-erasure.ts) names every table the compiler
 * sees declared.
 */
export const defineRollup = <const R extends Rollup>(rollup: R): R => rollup;

/** a retention condition: the row's day column is before the first kept day */
export const beforeFirstKeptDay = (column: string) => `t.${column} < {{first_kept_day}}::date`;

/** the rule of anonymous counts: the purge and an erase leave them */
export const KEPT = { kind: 'kept' } as const;

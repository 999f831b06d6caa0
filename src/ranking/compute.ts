// The catalog ranking: each app's score (formula.ts) from the rollups of the last 7 and 30 UTC days, written to
// app_scores in one transaction. Reads only rollup tables, always by their primary key prefix
// (app_id, day), so the cost follows the data inside the windows, never the size of history or raw events.
import { named } from '../db/named-sql.ts';
import { intArrayLiteral, type SqlReader, type SqlRunner } from '../db/sql.ts';
import { addDays, isoDayOf } from '../events/days.ts';
import { SIGNED_TRANSACTION_EVENT, WALLET_CONNECTION_EVENT } from '../events/wallet-funnel.ts';
import { MIN_ACTIVE_USERS_30D, type ScoreParts, scoreOf, scoreParts, shareOrZero } from './formula.ts';

/** events counted as a wallet connection (a user completing a TON Connect connection) and as a signed transaction */
export { SIGNED_TRANSACTION_EVENT, WALLET_CONNECTION_EVENT };
/** shown, not scored: fired automatically when an already connected wallet is restored on reopening */
export const WALLET_RESTORE_EVENT = 'connection-restoring-completed';

export interface WindowMetrics {
  /** first and last UTC day of the window, inclusive */
  from: string;
  to: string;
  active_users: number;
  /** active users seen on 2 or more different days of the window */
  returning_users: number;
  /** returning_users / active_users (0 without users) */
  retention: number;
  events: number;
  /** events / active_users (0 without users) */
  events_per_user: number;
  /** connection-completed events */
  wallet_connections: number;
  /** connection-restoring-completed events (shown, not scored) */
  wallet_restores: number;
  /** transaction-signed events */
  signed_transactions: number;
}

export interface ScoreComponents {
  window_7d: WindowMetrics;
  window_30d: WindowMetrics;
  parts: ScoreParts;
  /** why the app is not ranked; null when ranked */
  unranked_reason: string | null;
}

export interface RankedApp {
  appId: number;
  appName: string;
  bot: string;
  /** 1 = best; null when unranked */
  rank: number | null;
  /** 0..100 rounded to 2 decimals; null when unranked */
  score: number | null;
  components: ScoreComponents;
  computedAt: Date;
}

/** the ranking's windows: the first days of the last 30 and 7 days, and the last day */
type Window = {
  from30: string;
  from7: string;
  to: string;
};

// from30: the first day of the 30-day window, from7: of the 7-day window, to: the last day (the day of `now`).
// Per app, one range scan of daily_app_stats (app_id, day) and of daily_event_counts (app_id, day, event_name).
export const ACTIVITY_QUERY = `
SELECT a.id AS app_id, a.app_name, a.bot,
       coalesce(st.user_days, 0)::float8 AS user_days,
       coalesce(ev.events30, 0)::float8 AS events30,
       coalesce(ev.events7, 0)::float8 AS events7,
       coalesce(ev.connections30, 0)::float8 AS connections30,
       coalesce(ev.connections7, 0)::float8 AS connections7,
       coalesce(ev.restores30, 0)::float8 AS restores30,
       coalesce(ev.restores7, 0)::float8 AS restores7,
       coalesce(ev.transactions30, 0)::float8 AS transactions30,
       coalesce(ev.transactions7, 0)::float8 AS transactions7
FROM apps a
CROSS JOIN LATERAL (
  SELECT sum(s.users) AS user_days
  FROM daily_app_stats s
  WHERE s.app_id = a.id AND s.day BETWEEN {{from30}}::date AND {{to}}::date
) st
CROSS JOIN LATERAL (
  SELECT sum(c.events) AS events30,
         sum(c.events) FILTER (WHERE c.day >= {{from7}}::date) AS events7,
         sum(c.events) FILTER (WHERE c.event_name = '${WALLET_CONNECTION_EVENT}') AS connections30,
         sum(c.events) FILTER (WHERE c.event_name = '${WALLET_CONNECTION_EVENT}' AND c.day >= {{from7}}::date) AS connections7,
         sum(c.events) FILTER (WHERE c.event_name = '${WALLET_RESTORE_EVENT}') AS restores30,
         sum(c.events) FILTER (WHERE c.event_name = '${WALLET_RESTORE_EVENT}' AND c.day >= {{from7}}::date) AS restores7,
         sum(c.events) FILTER (WHERE c.event_name = '${SIGNED_TRANSACTION_EVENT}') AS transactions30,
         sum(c.events) FILTER (WHERE c.event_name = '${SIGNED_TRANSACTION_EVENT}' AND c.day >= {{from7}}::date) AS transactions7
  FROM daily_event_counts c
  WHERE c.app_id = a.id AND c.day BETWEEN {{from30}}::date AND {{to}}::date
) ev
ORDER BY a.id`;

// The days as above, apps: the app ids of one chunk. Per app, one range scan of daily_users (app_id, day, user_key):
// distinct users of each window and those seen on two or more days.
export const USERS_QUERY = `
SELECT a.app_id, u.users30, u.returning30, u.users7, u.returning7
FROM unnest({{apps}}::int[]) AS a(app_id)
CROSS JOIN LATERAL (
  SELECT count(*)::int AS users30,
         count(*) FILTER (WHERE p.days30 >= 2)::int AS returning30,
         count(*) FILTER (WHERE p.days7 >= 1)::int AS users7,
         count(*) FILTER (WHERE p.days7 >= 2)::int AS returning7
  FROM (
    SELECT count(*) AS days30, count(*) FILTER (WHERE d.day >= {{from7}}::date) AS days7
    FROM daily_users d
    WHERE d.app_id = a.app_id AND d.day BETWEEN {{from30}}::date AND {{to}}::date
    GROUP BY d.user_key
  ) p
) u`;

/**
 * daily_users rows read per statement at most (one app may exceed it alone): keeps every statement well
 * inside the server's statement timeout and lets ingest commits interleave on the embedded store
 */
const USER_ROWS_PER_CHUNK = 200_000;

interface ActivityRow {
  app_id: number;
  app_name: string;
  bot: string;
  user_days: number;
  events30: number;
  events7: number;
  connections30: number;
  connections7: number;
  restores30: number;
  restores7: number;
  transactions30: number;
  transactions7: number;
}

interface UsersRow {
  app_id: number;
  users30: number;
  returning30: number;
  users7: number;
  returning7: number;
}

const NO_USERS: Omit<UsersRow, 'app_id'> = { users30: 0, returning30: 0, users7: 0, returning7: 0 };

async function readUsers(sql: SqlReader, activity: ActivityRow[], days: Window): Promise<Map<number, UsersRow>> {
  const chunks: number[][] = [];
  let chunk: number[] = [];
  let rows = 0;
  for (const app of activity) {
    if (app.user_days <= 0) continue;
    if (chunk.length > 0 && rows + app.user_days > USER_ROWS_PER_CHUNK) {
      chunks.push(chunk);
      chunk = [];
      rows = 0;
    }
    chunk.push(app.app_id);
    rows += app.user_days;
  }
  if (chunk.length > 0) chunks.push(chunk);
  const users = new Map<number, UsersRow>();
  for (const ids of chunks) {
    for (const row of await sql.query<UsersRow>(...named(USERS_QUERY, { ...days, apps: intArrayLiteral(ids) })))
      users.set(row.app_id, row);
  }
  return users;
}

function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

function windowMetrics(
  from: string,
  to: string,
  users: number,
  returning: number,
  events: number,
  connections: number,
  restores: number,
  transactions: number,
): WindowMetrics {
  return {
    from,
    to,
    active_users: users,
    returning_users: returning,
    retention: round(shareOrZero(returning, users), 4),
    events,
    events_per_user: round(shareOrZero(events, users), 4),
    wallet_connections: connections,
    wallet_restores: restores,
    signed_transactions: transactions,
  };
}

function byName(a: { appName: string }, b: { appName: string }): number {
  return a.appName < b.appName ? -1 : a.appName > b.appName ? 1 : 0;
}

const WRITE_SCORES = `
INSERT INTO app_scores (app_id, computed_at, rank, score, components)
SELECT r.app_id, {{computed_at}}::timestamptz, r.rank, r.score, r.components
FROM jsonb_to_recordset({{scores}}::jsonb) AS r(app_id int, rank int, score float8, components jsonb)
JOIN apps ON apps.id = r.app_id
ORDER BY r.app_id
ON CONFLICT (app_id) DO UPDATE
  SET computed_at = excluded.computed_at, rank = excluded.rank, score = excluded.score, components = excluded.components`;

/**
 * Computes every app's components and score for the 7 and 30 UTC days ending with the day of `now`,
 * ranks them (1 = best; equal scores by app name), and replaces app_scores with the result in one
 * transaction (rows of apps that no longer exist are removed). Returns ranked apps first, then unranked by name.
 */
export async function computeRanking(
  sql: SqlRunner,
  now: Date = new Date(),
  reads: SqlReader = sql,
): Promise<RankedApp[]> {
  const to = isoDayOf(now.getTime());
  const from7 = addDays(to, -6);
  const from30 = addDays(to, -29);
  const days: Window = { from30, from7, to };

  const activity = await reads.query<ActivityRow>(...named(ACTIVITY_QUERY, days));
  const users = await readUsers(reads, activity, days);

  const results: RankedApp[] = activity.map((app) => {
    const u = users.get(app.app_id) ?? { app_id: app.app_id, ...NO_USERS };
    const parts = scoreParts({ ...u, ...app });
    const unranked =
      u.users30 < MIN_ACTIVE_USERS_30D
        ? `Fewer than ${MIN_ACTIVE_USERS_30D} active users in the last 30 days (${u.users30}).`
        : null;
    return {
      appId: app.app_id,
      appName: app.app_name,
      bot: app.bot,
      rank: null,
      score: unranked ? null : round(scoreOf(parts), 2),
      components: {
        window_7d: windowMetrics(
          from7,
          to,
          u.users7,
          u.returning7,
          app.events7,
          app.connections7,
          app.restores7,
          app.transactions7,
        ),
        window_30d: windowMetrics(
          from30,
          to,
          u.users30,
          u.returning30,
          app.events30,
          app.connections30,
          app.restores30,
          app.transactions30,
        ),
        parts: {
          reach: round(parts.reach, 4),
          retention: round(parts.retention, 4),
          engagement: round(parts.engagement, 4),
          wallet_connections: round(parts.wallet_connections, 4),
          signed_transactions: round(parts.signed_transactions, 4),
        },
        unranked_reason: unranked,
      },
      computedAt: now,
    };
  });

  const ranked = results.filter((app) => app.score !== null).sort((a, b) => b.score! - a.score! || byName(a, b));
  ranked.forEach((app, index) => (app.rank = index + 1));
  const unranked = results.filter((app) => app.score === null).sort(byName);
  const ordered = [...ranked, ...unranked];

  const rows = ordered.map((app) => ({
    app_id: app.appId,
    rank: app.rank,
    score: app.score,
    components: app.components,
  }));
  await sql.transaction(async (tx) => {
    if (rows.length > 0)
      await tx.query(...named(WRITE_SCORES, { scores: JSON.stringify(rows), computed_at: now.toISOString() }));
    await tx.query(
      ...named(`DELETE FROM app_scores WHERE NOT (app_id = ANY({{apps}}::int[]))`, {
        apps: intArrayLiteral(rows.map((row) => row.app_id)),
      }),
    );
  });
  return ordered;
}

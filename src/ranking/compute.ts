// The catalog ranking: each app's score (formula.ts) from its verified activity of the last 7 and 30 UTC days (the
// sessions whose launch Telegram signed, verified_sessions), written to app_scores in one transaction, with its users
// of any kind beside it. Only apps with verified launches in the 30 days are in the catalog; an app is listed under its bot only
// when no other app has more verified users naming the same bot. Reads only rollup tables, by their keys' prefix
// (app_id, day), so the cost follows the data inside the windows, never the size of history or raw events.
import { named } from '../db/named-sql.ts';
import { intArrayLiteral, type SqlReader, type SqlRunner } from '../db/sql.ts';
import { addDays, isoDayOf } from '../events/days.ts';
import { MIN_ACTIVE_USERS_30D, type ScoreParts, scoreOf, scoreParts, shareOrZero } from './formula.ts';

export interface WindowMetrics {
  /** first and last UTC day of the window, inclusive */
  from: string;
  to: string;
  /** users with a launch Telegram signed in the window (its auth_date's day): what the score counts */
  verified_users: number;
  /** verified users whose signed launches fall on 2 or more different days of the window */
  returning_users: number;
  /** returning_users / verified_users (0 without users) */
  retention: number;
  /** what the page reported in verified sessions */
  events: number;
  /** events / verified_users (0 without users) */
  events_per_user: number;
  /** verified users who completed a TON Connect wallet connection in a verified session */
  wallet_connections: number;
  /** verified users who signed a transaction in a verified session */
  signed_transactions: number;
  /** every user the app's events name in the window, verified or not */
  active_users: number;
  /** active users without a verified launch in the window: shown, never scored */
  unverified_users: number;
}

export interface ScoreComponents {
  window_7d: WindowMetrics;
  window_30d: WindowMetrics;
  parts: ScoreParts;
  /** why the app is not ranked; null when ranked */
  unranked_reason: string | null;
  /** false when another app with more verified users names the same bot: the app is listed without it */
  bot_listed: boolean;
}

export interface RankedApp {
  appId: number;
  appName: string;
  /** the bot the app is listed under; null when another app holds it (components.bot_listed) */
  bot: string | null;
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

/** an app (a) its owner lists in the catalog, with a token that works: a revoked app is no app to try */
export const IN_CATALOG = `a.catalog_listed AND EXISTS (SELECT 1 FROM tokens t WHERE t.app_id = a.id AND t.revoked_at IS NULL)`;

// Per app, one range scan of verified_sessions by app over the 30 days, grouped per user.
export const VERIFIED_QUERY = `
SELECT a.id AS app_id, a.app_name, a.bot, a.bot_id::text AS bot_id,
       coalesce(st.user_days, 0)::float8 AS user_days, v.*
FROM apps a
CROSS JOIN LATERAL (
  SELECT sum(s.users) AS user_days FROM daily_app_stats s
  WHERE s.app_id = a.id AND s.day BETWEEN {{from30}}::date AND {{to}}::date
) st
CROSS JOIN LATERAL (
  SELECT count(*)::int AS users30,
         count(*) FILTER (WHERE p.days30 >= 2)::int AS returning30,
         count(*) FILTER (WHERE p.days7 >= 1)::int AS users7,
         count(*) FILTER (WHERE p.days7 >= 2)::int AS returning7,
         coalesce(sum(p.events30), 0)::float8 AS events30,
         coalesce(sum(p.events7), 0)::float8 AS events7,
         count(*) FILTER (WHERE p.wallet30)::int AS connections30,
         count(*) FILTER (WHERE p.wallet7)::int AS connections7,
         count(*) FILTER (WHERE p.signed30)::int AS transactions30,
         count(*) FILTER (WHERE p.signed7)::int AS transactions7
  FROM (
    SELECT count(DISTINCT v.day) AS days30,
           count(DISTINCT v.day) FILTER (WHERE v.day >= {{from7}}::date) AS days7,
           sum(v.events) AS events30,
           sum(v.events) FILTER (WHERE v.day >= {{from7}}::date) AS events7,
           bool_or(v.wallet_connected) AS wallet30,
           coalesce(bool_or(v.wallet_connected) FILTER (WHERE v.day >= {{from7}}::date), false) AS wallet7,
           bool_or(v.transaction_signed) AS signed30,
           coalesce(bool_or(v.transaction_signed) FILTER (WHERE v.day >= {{from7}}::date), false) AS signed7
    FROM verified_sessions v
    WHERE v.app_id = a.id AND v.day BETWEEN {{from30}}::date AND {{to}}::date
    GROUP BY v.user_key
  ) p
) v
WHERE ${IN_CATALOG}
ORDER BY a.id`;

// The days as above, apps: the app ids of one chunk. Per app, one range scan of daily_users (app_id, day, user_key):
// the distinct users of each window, verified or not.
export const USERS_QUERY = `
SELECT a.app_id, u.users30, u.users7
FROM unnest({{apps}}::int[]) AS a(app_id)
CROSS JOIN LATERAL (
  SELECT count(*)::int AS users30, count(*) FILTER (WHERE p.days7 >= 1)::int AS users7
  FROM (
    SELECT count(*) FILTER (WHERE d.day >= {{from7}}::date) AS days7
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

interface VerifiedRow {
  app_id: number;
  app_name: string;
  bot: string;
  bot_id: string | null;
  user_days: number;
  users30: number;
  returning30: number;
  users7: number;
  returning7: number;
  events30: number;
  events7: number;
  connections30: number;
  connections7: number;
  transactions30: number;
  transactions7: number;
}

interface UsersRow {
  app_id: number;
  users30: number;
  users7: number;
}

async function readUsers(sql: SqlReader, apps: VerifiedRow[], days: Window): Promise<Map<number, UsersRow>> {
  const chunks: number[][] = [];
  let chunk: number[] = [];
  let rows = 0;
  for (const app of apps) {
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
  verified: { users: number; returning: number; events: number; connections: number; transactions: number },
  activeUsers: number,
): WindowMetrics {
  return {
    from,
    to,
    verified_users: verified.users,
    returning_users: verified.returning,
    retention: round(shareOrZero(verified.returning, verified.users), 4),
    events: verified.events,
    events_per_user: round(shareOrZero(verified.events, verified.users), 4),
    wallet_connections: verified.connections,
    signed_transactions: verified.transactions,
    active_users: Math.max(activeUsers, verified.users),
    unverified_users: Math.max(0, activeUsers - verified.users),
  };
}

function byName(a: { appName: string }, b: { appName: string }): number {
  return a.appName < b.appName ? -1 : a.appName > b.appName ? 1 : 0;
}

/** the same bot, however an app spells it: its username (any case) or its numeric id */
const botKeys = (app: VerifiedRow) => [
  `name:${app.bot.toLowerCase()}`,
  ...(app.bot_id === null ? [] : [`id:${app.bot_id}`]),
];

/**
 * The apps listed under their bot: of the apps naming one bot (by username or id), the one with the most verified
 * users in 30 days (then the oldest); the others are listed without it
 */
function botHolders(apps: VerifiedRow[]): Set<number> {
  const holder = new Map<string, VerifiedRow>();
  const before = (a: VerifiedRow, b: VerifiedRow) =>
    a.users30 > b.users30 || (a.users30 === b.users30 && a.app_id < b.app_id);
  for (const app of apps)
    for (const key of botKeys(app)) {
      const current = holder.get(key);
      if (!current || before(app, current)) holder.set(key, app);
    }
  return new Set(apps.filter((app) => botKeys(app).every((key) => holder.get(key) === app)).map((app) => app.app_id));
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
 * Computes the components and score of every app with verified launches in the 7 and 30 UTC days ending with the day
 * of `now`, ranks them (1 = best; equal scores by app name), and replaces app_scores with the result in one
 * transaction (rows of apps no longer in the catalog are removed). Returns ranked apps first, then unranked by name.
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

  // an app enters the catalog with a verified launch, and leaves it after 30 days without one
  const apps = (await reads.query<VerifiedRow>(...named(VERIFIED_QUERY, days))).filter((app) => app.users30 > 0);
  const users = await readUsers(reads, apps, days);
  const holders = botHolders(apps);

  const results: RankedApp[] = apps.map((app) => {
    const all = users.get(app.app_id) ?? { app_id: app.app_id, users30: 0, users7: 0 };
    const parts = scoreParts(app);
    const unranked =
      app.users30 < MIN_ACTIVE_USERS_30D
        ? `Fewer than ${MIN_ACTIVE_USERS_30D} verified users in the last 30 days (${app.users30}).`
        : null;
    const listed = holders.has(app.app_id);
    return {
      appId: app.app_id,
      appName: app.app_name,
      bot: listed ? app.bot : null,
      rank: null,
      score: unranked ? null : round(scoreOf(parts), 2),
      components: {
        window_7d: windowMetrics(
          from7,
          to,
          {
            users: app.users7,
            returning: app.returning7,
            events: app.events7,
            connections: app.connections7,
            transactions: app.transactions7,
          },
          all.users7,
        ),
        window_30d: windowMetrics(
          from30,
          to,
          {
            users: app.users30,
            returning: app.returning30,
            events: app.events30,
            connections: app.connections30,
            transactions: app.transactions30,
          },
          all.users30,
        ),
        parts: {
          reach: round(parts.reach, 4),
          retention: round(parts.retention, 4),
          engagement: round(parts.engagement, 4),
          wallet_connections: round(parts.wallet_connections, 4),
          signed_transactions: round(parts.signed_transactions, 4),
        },
        unranked_reason: unranked,
        bot_listed: listed,
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

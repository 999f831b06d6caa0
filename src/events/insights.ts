// The insights an app's owner reads beyond the dashboard: a period's summary, retention cohorts, funnels of the
// owner's own steps, custom events with their property values, and start_param campaigns. All but the funnel
// read the loader's per-batch aggregates; the funnel reads the period's events of its steps.
import type { SqlRunner } from '../db/sql.ts';
import { DAY_MS } from './days.ts';
import { OTHER, ROLLUP_TEXT_LENGTH } from './custom-events.ts';
import { EVENT_NAMES } from './names.ts';
import { distinctUsers, type Period } from './rollups.ts';

/** the deepest a cohort is followed, in days after its first */
export const RETENTION_DAYS = 90;
/** the most steps of a funnel */
export const MAX_FUNNEL_STEPS = 6;
/** the values of a custom event's property listed one by one; the rest is summed up as OTHER */
export const TOP_PROPERTY_VALUES = 20;
/** the most campaigns listed (by new users) */
export const MAX_CAMPAIGNS = 100;

export interface Summary {
  events: number;
  users: number;
  sessions: number;
  new_users: number;
}

export interface Cohort {
  /** the first day of the cohort's users (first event ever in the app) */
  day: string;
  users: number;
  /** retained[k]: how many of them had an event on day + k (retained[0] = users), up to the period's end or 90 days */
  retained: number[];
}

export interface FunnelQuery {
  steps: string[];
  by: 'user' | 'session';
  windowMs: number;
}

export interface FunnelStepResult {
  name: string;
  count: number;
  /** median seconds from the previous step to this one, among those who reached it; null for the first step or none */
  median_seconds_from_previous: number | null;
}

export interface Campaign {
  start_param: string;
  new_users: number;
  /** of those new users, how many had an event seven days after their first (up to the period's end) */
  retained_d7: number;
  /** of those new users, how many completed a wallet connection (up to the period's end) */
  wallet_connections: number;
}

const cut = (text: string) => text.slice(0, ROLLUP_TEXT_LENGTH);

/**
 * A funnel step matches events by name: one of the event names the service records, else the name of a custom
 * event (custom_data.name of a custom-event).
 */
function stepMatch(step: string, parameter: string): string {
  return EVENT_NAMES.includes(step)
    ? `event_name = ${parameter}`
    : `event_name = 'custom-event' AND custom_name = ${parameter}`;
}

/**
 * Who did step 1 in the period (from their first time), then step 2 after it, and so on, each step within the window
 * from step 1; a step's time is the first matching event after the previous step's.
 */
function funnelSql(query: FunnelQuery): string {
  const who = query.by === 'user' ? 'user_key' : 'session_id';
  const parts = [
    `e AS (
  SELECT ${who} AS who, occurred_at AS at, event_name,
         CASE WHEN jsonb_typeof(props->'custom_data'->'name') = 'string' THEN left(props->'custom_data'->>'name', ${ROLLUP_TEXT_LENGTH}) END AS custom_name
  FROM events
  WHERE app_id = $1 AND day BETWEEN $2::date AND $3::date AND (event_name = ANY($4::text[]) OR event_name = 'custom-event')
)`,
    `s1 AS (SELECT who, min(at) AS t1 FROM e WHERE ${stepMatch(query.steps[0]!, '$5')} GROUP BY who)`,
  ];
  for (let k = 2; k <= query.steps.length; k++) {
    const previous = Array.from({ length: k - 1 }, (_, i) => `p.t${i + 1}`).join(', ');
    // the same event cannot be two steps in a row
    const after = query.steps[k - 1] === query.steps[k - 2] ? '>' : '>=';
    parts.push(`s${k} AS (
  SELECT p.who, ${previous}, min(e.at) AS t${k}
  FROM s${k - 1} p JOIN e ON e.who = p.who AND e.at ${after} p.t${k - 1} AND e.at <= p.t1 + $${5 + query.steps.length}::interval
  WHERE ${stepMatch(query.steps[k - 1]!, `$${4 + k}`)}
  GROUP BY p.who, ${previous}
)`);
  }
  const columns = query.steps.map((_, index) => {
    const k = index + 1;
    const median =
      k === 1
        ? 'NULL::float8'
        : `(SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM t${k} - t${k - 1})) FROM s${k})`;
    return `(SELECT count(*) FROM s${k})::int AS c${k}, ${median} AS m${k}`;
  });
  return `WITH ${parts.join(',\n')}\nSELECT ${columns.join(', ')}`;
}

export class InsightsReader {
  constructor(private readonly sql: SqlRunner) {}

  async summary(appId: number, period: Period): Promise<Summary> {
    const args = [appId, period.from, period.to];
    const [[totals], users, [fresh]] = await Promise.all([
      this.sql.query<{ events: number; sessions: number }>(
        `SELECT (SELECT coalesce(sum(events), 0)::float8 FROM daily_event_counts
                 WHERE app_id = $1 AND day BETWEEN $2::date AND $3::date) AS events,
                (SELECT coalesce(sum(sessions), 0)::float8 FROM daily_app_stats
                 WHERE app_id = $1 AND day BETWEEN $2::date AND $3::date) AS sessions`,
        args,
      ),
      distinctUsers(this.sql, appId, period),
      this.sql.query<{ new_users: number }>(
        `SELECT count(*)::int AS new_users FROM app_users WHERE app_id = $1 AND first_day BETWEEN $2::date AND $3::date`,
        args,
      ),
    ]);
    return {
      events: totals?.events ?? 0,
      users,
      sessions: totals?.sessions ?? 0,
      new_users: fresh?.new_users ?? 0,
    };
  }

  /** one cohort per day of the period with new users */
  async retention(appId: number, period: Period): Promise<{ cohorts: Cohort[] }> {
    const rows = await this.sql.query<{ day: string; offset: number; users: number }>(
      `SELECT a.first_day::text AS day, (d.day - a.first_day) AS offset, count(*)::int AS users
       FROM app_users a
       JOIN daily_users d ON d.app_id = a.app_id AND d.user_key = a.user_key
       WHERE a.app_id = $1 AND a.first_day BETWEEN $2::date AND $3::date
         AND d.day BETWEEN $2::date AND $3::date AND d.day BETWEEN a.first_day AND a.first_day + ${RETENTION_DAYS}
       GROUP BY 1, 2`,
      [appId, period.from, period.to],
    );
    const cohorts = new Map<string, Cohort>();
    const lastDay = Date.parse(period.to);
    for (const row of rows) {
      let cohort = cohorts.get(row.day);
      if (!cohort) {
        const followed = Math.min(RETENTION_DAYS, Math.round((lastDay - Date.parse(row.day)) / DAY_MS));
        cohort = { day: row.day, users: 0, retained: new Array(followed + 1).fill(0) };
        cohorts.set(row.day, cohort);
      }
      cohort.retained[row.offset] = row.users;
      if (row.offset === 0) cohort.users = row.users;
    }
    return { cohorts: [...cohorts.values()].sort((a, b) => a.day.localeCompare(b.day)) };
  }

  async funnel(appId: number, period: Period, query: FunnelQuery): Promise<{ steps: FunnelStepResult[] }> {
    const steps = query.steps.map(cut);
    const [row] = await this.sql.query<Record<string, number | null>>(funnelSql({ ...query, steps }), [
      appId,
      period.from,
      period.to,
      steps,
      ...steps,
      `${query.windowMs} milliseconds`,
    ]);
    return {
      steps: steps.map((name, index) => {
        const median = row?.[`m${index + 1}`];
        return {
          name,
          count: Number(row?.[`c${index + 1}`] ?? 0),
          median_seconds_from_previous: median === null || median === undefined ? null : Number(median),
        };
      }),
    };
  }

  /** custom event names with their events and distinct users; NO_NAME and OTHER appear as names of their own */
  async customEvents(
    appId: number,
    period: Period,
  ): Promise<{ events: { name: string; count: number; users: number }[] }> {
    const events = await this.sql.query<{ name: string; count: number; users: number }>(
      `SELECT c.name, c.count, coalesce(u.users, 0) AS users
       FROM (SELECT name, sum(events)::float8 AS count FROM daily_custom_events
             WHERE app_id = $1 AND day BETWEEN $2::date AND $3::date GROUP BY name) c
       LEFT JOIN (SELECT name, count(DISTINCT user_key)::int AS users FROM daily_custom_users
                  WHERE app_id = $1 AND day BETWEEN $2::date AND $3::date GROUP BY name) u ON u.name = c.name
       ORDER BY c.count DESC, c.name`,
      [appId, period.from, period.to],
    );
    return { events };
  }

  /** the custom event's most frequent values of one property, then everything else as OTHER */
  async customPropertyValues(
    appId: number,
    period: Period,
    name: string,
    property: string,
  ): Promise<{ values: { value: string; count: number }[] }> {
    const rows = await this.sql.query<{ value: string; count: number; tracked: boolean }>(
      `SELECT value, sum(events)::float8 AS count, value <> $6 AS tracked FROM daily_custom_values
       WHERE app_id = $1 AND day BETWEEN $2::date AND $3::date AND name = $4 AND property = $5
       GROUP BY value ORDER BY (value <> $6) DESC, count DESC, value`,
      [appId, period.from, period.to, cut(name), cut(property), OTHER],
    );
    const tracked = rows.filter((row) => row.tracked);
    const values = tracked.slice(0, TOP_PROPERTY_VALUES).map(({ value, count }) => ({ value, count }));
    const other = rows.reduce((sum, row) => sum + row.count, 0) - values.reduce((sum, row) => sum + row.count, 0);
    if (other > 0) values.push({ value: OTHER, count: other });
    return { values };
  }

  /** users by the start_param they first arrived with (new users of the period), most new users first */
  async campaigns(appId: number, period: Period): Promise<{ campaigns: Campaign[] }> {
    const campaigns = await this.sql.query<Campaign>(
      `SELECT a.campaign AS start_param, count(*)::int AS new_users,
              count(*) FILTER (WHERE a.first_day + 7 <= $3::date AND EXISTS (
                SELECT 1 FROM daily_users d WHERE d.app_id = a.app_id AND d.day = a.first_day + 7 AND d.user_key = a.user_key
              ))::int AS retained_d7,
              count(*) FILTER (WHERE EXISTS (
                SELECT 1 FROM wallet_users w WHERE w.app_id = a.app_id AND w.user_key = a.user_key AND w.first_day <= $3::date
              ))::int AS wallet_connections
       FROM app_users a
       WHERE a.app_id = $1 AND a.first_day BETWEEN $2::date AND $3::date AND a.campaign <> ''
       GROUP BY a.campaign ORDER BY new_users DESC, a.campaign LIMIT ${MAX_CAMPAIGNS}`,
      [appId, period.from, period.to],
    );
    return { campaigns };
  }
}

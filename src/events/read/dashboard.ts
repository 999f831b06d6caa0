// Reads an app's numbers for a period from the rollups (never scanning raw events, so it stays fast at
// any volume), plus the raw-event reads a dashboard needs: a filtered view, the latest events and exports.
import { named } from '../../db/named-sql.ts';
import type { SqlReader } from '../../db/sql.ts';
import { addDays, eachDay, isCompleteDay, type Period } from '../days.ts';
import { readOwnerFunnel } from './funnel-reader.ts';
import { DEFAULT_WINDOW, parseFunnelQuery } from './funnel-parameters.ts';
import {
  eventColumns,
  eventFilter,
  type Filter,
  filterConditions,
  filterValues,
  isFiltered,
  NO_FILTER,
} from './filters.ts';
import { FUNNEL } from '../wallet-funnel.ts';
import { ratio } from '../ratio.ts';
import { VERIFIED_USERS } from './launch-checks.ts';

export type { Period };

export interface DayRow {
  day: string;
  users: number;
  /** sessions that started this day: a session is counted once, on its first day */
  sessions: number;
  events: number;
  byName: Record<string, number>;
  /** false for today (UTC): its numbers still grow, so charts mark it and comparisons leave it out */
  complete: boolean;
}

export interface Dashboard {
  period: Period;
  /** verifiedUsers: of the users, those with a launch Telegram signed (src/events/read/launch-checks.ts) */
  totals: { events: number; users: number; verifiedUsers: number; sessions: number };
  days: DayRow[];
  eventNames: { name: string; events: number }[];
  /**
   * the wallet funnel as the Funnel insight and the read API count it (WALLET_FUNNEL): users who took each step, within
   * its window of their first, having taken every step before it (rates from those), and the step's events
   */
  funnel: { name: string; users: number; events: number; fromPrevious: number | null; fromFirst: number | null }[];
  /** how the funnel counts: by user, and its window as a read API's funnel names it */
  funnelWindow: string;
  dimensions: Record<'platform' | 'locale' | 'start_param', { value: string; sessions: number }[]>;
}

export interface RecentEvent {
  receivedAt: Date;
  occurredAt: Date;
  eventName: string;
  sessionId: string;
  platform: string | null;
  locale: string | null;
  startParam: string | null;
  isPremium: boolean;
  isSuccess: boolean;
  props: Record<string, unknown>;
}

export interface ExportRow extends RecentEvent {
  /** pseudonymous user key (hex): the same user within this app, never the Telegram id */
  user: string;
}

/**
 * The first screen's wallet funnel: the TON Connect steps by user within the default window, asked of the funnel reader
 * as the Funnel insight and the read API's funnel ask it, so one page never gives two answers to one question (TON
 * Connect restores a wallet in later sessions, so a funnel by session would read about zero at its later steps)
 */
const WALLET_FUNNEL = (() => {
  const parsed = parseFunnelQuery({ steps: FUNNEL.join(','), by: 'user', window: DEFAULT_WINDOW }, FUNNEL.length);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed.value;
})();

/** most values listed per launch dimension */
const TOP_VALUES = 20;

/**
 * SQL: the sessions of the CTE `kept` (session ids) that started in the period (from, to), as daily_sessions counts
 * them (alias s), so a filtered count agrees with the unfiltered one
 */
export const STARTED_SESSIONS = `(SELECT DISTINCT session_id FROM kept) k
  JOIN daily_sessions s ON s.app_id = {{app}} AND s.session_id = k.session_id
  WHERE s.day BETWEEN {{from}}::date AND {{to}}::date`;

/** the last `days` UTC days ending today */
export function lastDays(days: number, now = new Date()): Period {
  const to = now.toISOString().slice(0, 10);
  return { from: addDays(to, -(days - 1)), to };
}

/**
 * Distinct users active in a period. When no user of the app was last seen after the period, a user was
 * active in it exactly when last seen in it: one index range of app_users (the usual "last N days"
 * case). Otherwise, the distinct user keys of the period's user-days (a scan that grows with the period).
 */
const DISTINCT_USERS = `
SELECT (CASE WHEN EXISTS (SELECT 1 FROM app_users WHERE app_id = {{app}} AND last_day > {{to}}::date)
  THEN (SELECT count(*) FROM (SELECT DISTINCT user_key FROM daily_users
                              WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date) AS distinct_users)
  ELSE (SELECT count(*) FROM app_users WHERE app_id = {{app}} AND last_day BETWEEN {{from}}::date AND {{to}}::date)
END)::int AS users`;

export async function distinctUsers(sql: SqlReader, appId: number, period: Period): Promise<number> {
  const [row] = await sql.query<{ users: number }>(
    ...named(DISTINCT_USERS, { app: appId, from: period.from, to: period.to }),
  );
  return row?.users ?? 0;
}

/** what the dashboard is made of, read from the rollups or, under a filter, from the events */
interface DashboardParts {
  counts: { day: string; event_name: string; events: number }[];
  stats: { day: string; users: number; sessions: number }[];
  dimensions: { dimension: 'platform' | 'locale' | 'start_param'; value: string; sessions: number }[];
  users: number;
  verifiedUsers: number;
}

export class RollupReader {
  constructor(
    private readonly sql: SqlReader,
    /** the time the reads take as now: which days are over */
    private readonly now: () => number = Date.now,
  ) {}

  async dashboard(appId: number, period: Period, filter: Filter = NO_FILTER): Promise<Dashboard> {
    const [{ counts, stats, dimensions, users, verifiedUsers }, funnel] = await Promise.all([
      isFiltered(filter) ? this.fromEvents(appId, period, filter) : this.fromRollups(appId, period),
      readOwnerFunnel(this.sql, appId, period, WALLET_FUNNEL, filter),
    ]);
    const days = new Map(
      eachDay(period.from, period.to).map((day) => [
        day,
        { day, users: 0, sessions: 0, events: 0, byName: {}, complete: isCompleteDay(day, this.now()) } as DayRow,
      ]),
    );
    const names = new Map<string, number>();
    for (const row of counts) {
      const day = days.get(row.day);
      if (!day) continue;
      day.byName[row.event_name] = row.events;
      day.events += row.events;
      names.set(row.event_name, (names.get(row.event_name) ?? 0) + row.events);
    }
    for (const row of stats) {
      const day = days.get(row.day);
      if (day) Object.assign(day, { users: row.users, sessions: row.sessions });
    }
    const reached = funnel.steps.map((step) => step.count);
    const grouped: Dashboard['dimensions'] = { platform: [], locale: [], start_param: [] };
    for (const row of dimensions) grouped[row.dimension].push({ value: row.value, sessions: row.sessions });
    const dayRows = [...days.values()];
    return {
      period,
      totals: {
        events: dayRows.reduce((sum, day) => sum + day.events, 0),
        users,
        verifiedUsers,
        sessions: dayRows.reduce((sum, day) => sum + day.sessions, 0),
      },
      days: dayRows,
      eventNames: [...names]
        .map(([name, events]) => ({ name, events }))
        .sort((a, b) => b.events - a.events || a.name.localeCompare(b.name)),
      funnel: FUNNEL.map((name, index) => ({
        name,
        users: reached[index]!,
        events: names.get(name) ?? 0,
        fromPrevious: index === 0 ? null : ratio(reached[index]!, reached[index - 1]!),
        fromFirst: index === 0 ? null : ratio(reached[index]!, reached[0]!),
      })),
      funnelWindow: DEFAULT_WINDOW,
      dimensions: grouped,
    };
  }

  private async fromRollups(appId: number, period: Period): Promise<DashboardParts> {
    const args = { app: appId, from: period.from, to: period.to };
    const [counts, stats, dimensions, distinct] = await Promise.all([
      this.sql.query<DashboardParts['counts'][number]>(
        ...named(
          `SELECT day::text, event_name, events::float8 AS events FROM daily_event_counts
         WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date`,
          args,
        ),
      ),
      this.sql.query<DashboardParts['stats'][number]>(
        ...named(
          `SELECT day::text, users, sessions FROM daily_app_stats WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date`,
          args,
        ),
      ),
      this.sql.query<DashboardParts['dimensions'][number]>(
        ...named(
          `SELECT dimension, value, sessions FROM (
           SELECT dimension, value, sum(sessions)::float8 AS sessions,
                  row_number() OVER (PARTITION BY dimension ORDER BY sum(sessions) DESC, value) AS place
           FROM daily_dimensions WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date GROUP BY 1, 2) AS ranked
         WHERE place <= ${TOP_VALUES} ORDER BY dimension, place`,
          args,
        ),
      ),
      // the distinct users and, of them, those with a verified launch: one statement
      this.sql.query<{ users: number; verified_users: number }>(
        ...named(`${DISTINCT_USERS}, (${VERIFIED_USERS}) AS verified_users`, args),
      ),
    ]);
    const [row] = distinct;
    return { counts, stats, dimensions, users: row?.users ?? 0, verifiedUsers: row?.verified_users ?? 0 };
  }

  /**
   * The same numbers from the period's events the filter keeps: a session with such an event counts on the day it
   * started, when that is in the period, under the attributes it started with
   */
  private async fromEvents(appId: number, period: Period, filter: Filter): Promise<DashboardParts> {
    const params = { app: appId, from: period.from, to: period.to, ...filterValues(filter) };
    const kept = `FROM events WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date${filterConditions(filter, eventFilter())}`;
    const starts = `WITH kept AS (SELECT session_id ${kept}), starts AS (SELECT s.* FROM ${STARTED_SESSIONS})`;
    const [counts, stats, dimensions, users, verifiedUsers] = await Promise.all([
      this.sql.query<DashboardParts['counts'][number]>(
        ...named(`SELECT day::text, event_name, count(*)::float8 AS events ${kept} GROUP BY 1, 2`, params),
      ),
      this.sql.query<DashboardParts['stats'][number]>(
        ...named(
          `${starts}
         SELECT coalesce(u.day, s.day)::text AS day, coalesce(u.users, 0)::int AS users,
                coalesce(s.sessions, 0)::int AS sessions
         FROM (SELECT day, count(DISTINCT user_key)::int AS users ${kept} GROUP BY 1) u
         FULL JOIN (SELECT day, count(*) AS sessions FROM starts GROUP BY 1) s ON s.day = u.day`,
          params,
        ),
      ),
      this.sql.query<DashboardParts['dimensions'][number]>(
        ...named(
          `${starts}
         SELECT dimension, value, sessions FROM (
           SELECT x.dimension, x.value, count(*)::float8 AS sessions,
                  row_number() OVER (PARTITION BY x.dimension ORDER BY count(*) DESC, x.value) AS place
           FROM starts s CROSS JOIN LATERAL (VALUES ('platform', ${eventColumns('s').platform}),
             ('locale', ${eventColumns('s').language}), ('start_param', ${eventColumns('s').campaign})) AS x(dimension, value)
           GROUP BY 1, 2) AS ranked
         WHERE place <= ${TOP_VALUES} ORDER BY dimension, place`,
          params,
        ),
      ),
      this.sql
        .query<{ users: number }>(...named(`SELECT count(DISTINCT user_key)::int AS users ${kept}`, params))
        .then(([row]) => row?.users ?? 0),
      // the users of the kept events in sessions Telegram signed
      this.sql
        .query<{ users: number }>(
          ...named(`SELECT count(DISTINCT user_key)::int AS users ${kept} AND ${eventColumns().verified}`, params),
        )
        .then(([row]) => row?.users ?? 0),
    ]);
    return { counts, stats, dimensions, users, verifiedUsers };
  }

  /**
   * The latest events as received, for checking an integration live; among the events of one request
   * the latest to happen comes first.
   */
  async recent(appId: number, limit = 25, filter: Filter = NO_FILTER): Promise<RecentEvent[]> {
    const params = { app: appId, limit, ...filterValues(filter) };
    const rows = await this.sql.query<Record<string, unknown>>(
      ...named(
        `SELECT received_at, occurred_at, event_name, session_id::text, platform, locale, start_param, is_premium, is_success, props
       FROM events WHERE app_id = {{app}}${filterConditions(filter, eventFilter())}
       ORDER BY received_at DESC, occurred_at DESC LIMIT {{limit}}`,
        params,
      ),
    );
    return rows.map(toRecent);
  }

  /** every event counted in the period (same days as the dashboard), in pages: bounded memory at any volume */
  async *export(
    appId: number,
    period: Period,
    filter: Filter = NO_FILTER,
    pageSize = 5000,
  ): AsyncGenerator<ExportRow[]> {
    let after: { receivedAt: string; key: string } | null = null;
    for (;;) {
      const params = {
        app: appId,
        from: period.from,
        to: period.to,
        after_at: after?.receivedAt ?? null,
        after_key: after?.key ?? '',
        page: pageSize,
        ...filterValues(filter),
      };
      const filtered = filterConditions(filter, eventFilter());
      const rows: Record<string, unknown>[] = await this.sql.query(
        ...named(
          `SELECT received_at, occurred_at, event_name, session_id::text, platform, locale, start_param, is_premium, is_success,
                props, encode(user_key, 'hex') AS user, encode(event_key, 'hex') AS key, to_json(received_at)#>>'{}' AS cursor
         FROM events
         WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date
           AND ({{after_at}}::timestamptz IS NULL
                OR (received_at, encode(event_key, 'hex')) > ({{after_at}}::timestamptz, {{after_key}}::text))${filtered}
         ORDER BY received_at, event_key LIMIT {{page}}`,
          params,
        ),
      );
      if (rows.length === 0) return;
      yield rows.map((row) => ({ ...toRecent(row), user: row.user as string }));
      const last = rows[rows.length - 1]!;
      after = { receivedAt: last.cursor as string, key: last.key as string };
      if (rows.length < pageSize) return;
    }
  }
}

function toRecent(row: Record<string, unknown>): RecentEvent {
  return {
    receivedAt: row.received_at as Date,
    occurredAt: row.occurred_at as Date,
    eventName: row.event_name as string,
    sessionId: row.session_id as string,
    platform: row.platform as string | null,
    locale: row.locale as string | null,
    startParam: row.start_param as string | null,
    isPremium: row.is_premium as boolean,
    isSuccess: row.is_success as boolean,
    props: row.props as Record<string, unknown>,
  };
}

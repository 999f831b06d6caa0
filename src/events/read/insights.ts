// The insights an app's owner reads beyond the dashboard: a period's summary, retention cohorts, funnels of the
// owner's own steps, custom events with their property values, and start_param campaigns. All but the funnel
// read the loader's per-batch aggregates; the funnel reads its steps' postings (src/events/read/funnel-reader.ts), and the
// event cards under a filter the period's events.
import { named } from '../../db/named-sql.ts';
import type { SqlReader } from '../../db/sql.ts';
import { completeDaysFrom, DAY_MS } from '../days.ts';
import {
  customDataObjectSql,
  customNameSql,
  cutText,
  cutTextSql,
  isPropertySql,
  NO_CUSTOM_NAMES,
  OTHER,
  OTHER_SLOT,
  propertyValueSql,
} from '../custom-events.ts';
import {
  eventColumns,
  eventFilter,
  type Filter,
  filterConditions,
  filterValues,
  firstSeenColumns,
  isFiltered,
  NO_FILTER,
} from './filters.ts';
import { type FunnelQuery, type FunnelStepResult, readOwnerFunnel } from './funnel-reader.ts';
import { readRevenue, type Revenue } from './revenue.ts';
import { distinctUsers, type Period, STARTED_SESSIONS } from './dashboard.ts';
import { VERIFIED_USERS } from './launch-checks.ts';

/** the deepest a cohort is followed, in days after its first */
export const RETENTION_DAYS = 90;
/** the most steps of a funnel */
export const MAX_FUNNEL_STEPS = 6;
/** the values of a custom event's property listed one by one; the rest is summed up as OTHER */
export const TOP_PROPERTY_VALUES = 20;
/** the most campaigns listed (by new users) */
export const MAX_CAMPAIGNS = 100;

export type { FunnelQuery, FunnelStepResult } from './funnel-reader.ts';

export interface Summary {
  events: number;
  users: number;
  /** of the users, those with a launch Telegram signed (src/events/read/launch-checks.ts) */
  verified_users: number;
  sessions: number;
  new_users: number;
}

export interface Cohort {
  /** the first day of the cohort's users (first event ever in the app) */
  day: string;
  users: number;
  /** retained[k]: how many of them had an event on day + k (retained[0] = users), up to the period's end or 90 days */
  retained: number[];
  /** how many of retained's days are over: from retained[complete] on (today) a cell is still growing */
  complete: number;
}

export interface CustomEventCount {
  name: string;
  count: number;
  users: number;
  /** the properties of custom_data whose values are tracked for this name, in order */
  properties: string[];
}

export interface Campaign {
  start_param: string;
  new_users: number;
  /** of those new users, how many had an event seven days after their first (up to the period's end) */
  retained_d7: number;
  /** of those new users, how many completed a wallet connection (up to the period's end) */
  wallet_connections: number;
}

/**
 * Each custom event's distinct users in the period (from, to): the names of each user's days in it, as bits
 * (daily_users.custom_names), joined, then the users whose bits meet each name's mask counted. A name's mask holds
 * its slot's bit, and OTHER's also OTHER_SLOT's (a client may name an event OTHER itself), so a user counts once
 * per name without a DISTINCT, which would sort every (user, name) pair.
 */
const CUSTOM_EVENT_USERS = `
SELECT names.name, count(*)::int AS users
FROM (SELECT user_key, bit_or(custom_names) AS bits FROM daily_users
      WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date AND custom_names IS NOT NULL
      GROUP BY user_key) AS period_users
JOIN (SELECT name, bit_or(set_bit(${NO_CUSTOM_NAMES}, slot, 1)) AS mask FROM (
        SELECT name, slot FROM custom_catalog WHERE app_id = {{app}} AND level = 0 AND slot IS NOT NULL
        UNION ALL SELECT '${OTHER}', ${OTHER_SLOT}) AS slots
      GROUP BY name) AS names ON period_users.bits & names.mask <> ${NO_CUSTOM_NAMES}
GROUP BY names.name`;

/** a custom event's name as the rollups count it (events e): NO_NAME without one, OTHER beyond the catalog */
const TRACKED_NAME = `(SELECT coalesce(min(c.name), '${OTHER}') FROM custom_catalog c WHERE c.app_id = e.app_id AND c.level = 0
  AND c.name = ${customNameSql("e.props->'custom_data'")} AND c.slot IS NOT NULL)`;

/** a value (p.value, jsonb) of the property of the custom event named by the parameters (events e) as the rollups count it: OTHER beyond the catalog */
const TRACKED_VALUE = `(SELECT coalesce(min(c.value), '${OTHER}') FROM custom_catalog c
  WHERE c.app_id = e.app_id AND c.level = 2 AND c.name = {{name}} AND c.property = {{property}}
    AND c.value = ${propertyValueSql('p.value')})`;

/** the custom_data fields (p: key and value) of events e that the rollups count as the property: keys cut as they are */
const PROPERTY_FIELDS = `CROSS JOIN LATERAL jsonb_each(${customDataObjectSql("e.props->'custom_data'")}) AS p(key, value)`;

export class InsightsReader {
  constructor(
    private readonly sql: SqlReader,
    /** the time the reads take as now: which days are over */
    private readonly now: () => number = Date.now,
  ) {}

  async summary(appId: number, period: Period, filter: Filter = NO_FILTER): Promise<Summary> {
    if (isFiltered(filter)) return this.filteredSummary(appId, period, filter);
    const args = { app: appId, from: period.from, to: period.to };
    const [[totals], users, [fresh]] = await Promise.all([
      this.sql.query<{ events: number; sessions: number; verified_users: number }>(
        ...named(
          `SELECT (SELECT coalesce(sum(events), 0)::float8 FROM daily_event_counts
                 WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date) AS events,
                (SELECT coalesce(sum(sessions), 0)::float8 FROM daily_app_stats
                 WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date) AS sessions,
                (${VERIFIED_USERS}) AS verified_users`,
          args,
        ),
      ),
      distinctUsers(this.sql, appId, period),
      this.sql.query<{ new_users: number }>(
        ...named(
          `SELECT count(*)::int AS new_users FROM app_users WHERE app_id = {{app}} AND first_day BETWEEN {{from}}::date AND {{to}}::date`,
          args,
        ),
      ),
    ]);
    return {
      events: totals?.events ?? 0,
      users,
      verified_users: totals?.verified_users ?? 0,
      sessions: totals?.sessions ?? 0,
      new_users: fresh?.new_users ?? 0,
    };
  }

  /**
   * A filtered period's summary, from its events: users are those with an event the filter keeps (verified users:
   * with such an event in a verified session); sessions those with such an event that started in the period, each
   * counted once as without a filter.
   */
  private async filteredSummary(appId: number, period: Period, filter: Filter): Promise<Summary> {
    const params = { app: appId, from: period.from, to: period.to, ...filterValues(filter) };
    const onEvents = filterConditions(filter, eventFilter());
    const onUsers = filterConditions(filter, firstSeenColumns('a'));
    const [row] = await this.sql.query<Summary>(
      ...named(
        `WITH kept AS (SELECT user_key, session_id, ${eventColumns().verified} AS verified FROM events
                      WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date${onEvents})
       SELECT (SELECT count(*) FROM kept)::float8 AS events, (SELECT count(DISTINCT user_key) FROM kept)::int AS users,
              (SELECT count(DISTINCT user_key) FROM kept WHERE verified)::int AS verified_users,
              (SELECT count(*) FROM ${STARTED_SESSIONS})::int AS sessions,
              (SELECT count(*) FROM app_users a WHERE a.app_id = {{app}} AND a.first_day BETWEEN {{from}}::date AND {{to}}::date${onUsers})::int
                AS new_users`,
        params,
      ),
    );
    return row ?? { events: 0, users: 0, verified_users: 0, sessions: 0, new_users: 0 };
  }

  /** one cohort per day of the period with new users */
  async retention(appId: number, period: Period, filter: Filter = NO_FILTER): Promise<{ cohorts: Cohort[] }> {
    const params = { app: appId, from: period.from, to: period.to, ...filterValues(filter) };
    const rows = await this.sql.query<{ day: string; offset: number; users: number }>(
      ...named(
        `SELECT a.first_day::text AS day, (d.day - a.first_day) AS offset, count(*)::int AS users
       FROM app_users a
       JOIN daily_users d ON d.app_id = a.app_id AND d.user_key = a.user_key
       WHERE a.app_id = {{app}} AND a.first_day BETWEEN {{from}}::date AND {{to}}::date
         AND d.day BETWEEN {{from}}::date AND {{to}}::date AND d.day BETWEEN a.first_day AND a.first_day + ${RETENTION_DAYS}
         ${filterConditions(filter, firstSeenColumns('a'))}
       GROUP BY 1, 2`,
        params,
      ),
    );
    const cohorts = new Map<string, Cohort>();
    const lastDay = Date.parse(period.to);
    for (const row of rows) {
      let cohort = cohorts.get(row.day);
      if (!cohort) {
        const followed = Math.min(RETENTION_DAYS, Math.round((lastDay - Date.parse(row.day)) / DAY_MS));
        cohort = {
          day: row.day,
          users: 0,
          retained: new Array(followed + 1).fill(0),
          complete: Math.min(followed + 1, completeDaysFrom(row.day, this.now())),
        };
        cohorts.set(row.day, cohort);
      }
      cohort.retained[row.offset] = row.users;
      if (row.offset === 0) cohort.users = row.users;
    }
    return { cohorts: [...cohorts.values()].sort((a, b) => a.day.localeCompare(b.day)) };
  }

  funnel(
    appId: number,
    period: Period,
    query: FunnelQuery,
    filter: Filter = NO_FILTER,
  ): Promise<{ steps: FunnelStepResult[] }> {
    return readOwnerFunnel(this.sql, appId, period, query, filter);
  }

  /** custom event names with their events and distinct users; NO_NAME and OTHER appear as names of their own */
  async customEvents(
    appId: number,
    period: Period,
    filter: Filter = NO_FILTER,
  ): Promise<{ events: CustomEventCount[] }> {
    const [counts, properties] = await Promise.all([
      this.customEventCounts(appId, period, filter),
      this.customPropertyNames(appId),
    ]);
    return { events: counts.map((event) => ({ ...event, properties: properties.get(event.name) ?? [] })) };
  }

  /** the property names of each custom event whose values are tracked (the first ones each name was sent with) */
  private async customPropertyNames(appId: number): Promise<Map<string, string[]>> {
    const rows = await this.sql.query<{ name: string; properties: string[] }>(
      ...named(
        `SELECT name, array_agg(property ORDER BY property) AS properties FROM custom_catalog
         WHERE app_id = {{app}} AND level = 1 GROUP BY name`,
        { app: appId },
      ),
    );
    return new Map(rows.map((row) => [row.name, row.properties]));
  }

  private async customEventCounts(
    appId: number,
    period: Period,
    filter: Filter,
  ): Promise<{ name: string; count: number; users: number }[]> {
    if (isFiltered(filter)) {
      const params = { app: appId, from: period.from, to: period.to, ...filterValues(filter) };
      const conditions = filterConditions(filter, eventFilter('e'));
      const events = await this.sql.query<{ name: string; count: number; users: number }>(
        ...named(
          `SELECT name, count(*)::float8 AS count, count(DISTINCT user_key)::int AS users
         FROM (SELECT ${TRACKED_NAME} AS name, e.user_key FROM events e
               WHERE e.app_id = {{app}} AND e.day BETWEEN {{from}}::date AND {{to}}::date AND e.event_name = 'custom-event'${conditions}) named
         GROUP BY name ORDER BY count DESC, name`,
          params,
        ),
      );
      return events;
    }
    const events = await this.sql.query<{ name: string; count: number; users: number }>(
      ...named(
        `SELECT c.name, c.count, coalesce(u.users, 0) AS users
       FROM (SELECT name, sum(events)::float8 AS count FROM daily_custom_events
             WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date GROUP BY name) c
       LEFT JOIN (${CUSTOM_EVENT_USERS}) u ON u.name = c.name
       ORDER BY c.count DESC, c.name`,
        { app: appId, from: period.from, to: period.to },
      ),
    );
    return events;
  }

  /** the custom event's most frequent values of one property, then everything else as OTHER */
  async customPropertyValues(
    appId: number,
    period: Period,
    name: string,
    property: string,
    filter: Filter = NO_FILTER,
  ): Promise<{ values: { value: string; count: number }[] }> {
    const params = {
      app: appId,
      from: period.from,
      to: period.to,
      name: cutText(name),
      property: cutText(property),
      other: OTHER,
      ...filterValues(filter),
    };
    const rows = await this.sql.query<{ value: string; count: number; tracked: boolean }>(
      ...named(
        isFiltered(filter)
          ? `SELECT value, count(*)::float8 AS count, value <> {{other}} AS tracked FROM (
             SELECT ${TRACKED_VALUE} AS value FROM events e ${PROPERTY_FIELDS}
             WHERE e.app_id = {{app}} AND e.day BETWEEN {{from}}::date AND {{to}}::date AND e.event_name = 'custom-event'
               AND ${TRACKED_NAME} = {{name}}
               AND EXISTS (SELECT 1 FROM custom_catalog t WHERE t.app_id = e.app_id AND t.level = 1 AND t.name = {{name}} AND t.property = {{property}})
               AND ${isPropertySql('p')} AND ${cutTextSql('p.key')} = {{property}}
               ${filterConditions(filter, eventFilter('e'))}) v
           GROUP BY value ORDER BY (value <> {{other}}) DESC, count DESC, value`
          : `SELECT value, sum(events)::float8 AS count, value <> {{other}} AS tracked FROM daily_custom_values
           WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date AND name = {{name}} AND property = {{property}}
           GROUP BY value ORDER BY (value <> {{other}}) DESC, count DESC, value`,
        params,
      ),
    );
    const tracked = rows.filter((row) => row.tracked);
    const values = tracked.slice(0, TOP_PROPERTY_VALUES).map(({ value, count }) => ({ value, count }));
    const other = rows.reduce((sum, row) => sum + row.count, 0) - values.reduce((sum, row) => sum + row.count, 0);
    if (other > 0) values.push({ value: OTHER, count: other });
    return { values };
  }

  /** users by the start_param they first arrived with (new users of the period), most new users first */
  /** Stars per day, paying users and purchase conversion (src/events/read/revenue.ts) */
  revenue(appId: number, period: Period, filter: Filter = NO_FILTER): Promise<Revenue> {
    return readRevenue(this.sql, appId, period, filter, this.now());
  }

  async campaigns(appId: number, period: Period, filter: Filter = NO_FILTER): Promise<{ campaigns: Campaign[] }> {
    const params = { app: appId, from: period.from, to: period.to, ...filterValues(filter) };
    const conditions = filterConditions(filter, firstSeenColumns('a'));
    const campaigns = await this.sql.query<Campaign>(
      ...named(
        `SELECT a.campaign AS start_param, count(*)::int AS new_users,
              count(*) FILTER (WHERE a.first_day + 7 <= {{to}}::date AND EXISTS (
                SELECT 1 FROM daily_users d WHERE d.app_id = a.app_id AND d.day = a.first_day + 7 AND d.user_key = a.user_key
              ))::int AS retained_d7,
              count(*) FILTER (WHERE EXISTS (
                SELECT 1 FROM wallet_users w WHERE w.app_id = a.app_id AND w.user_key = a.user_key AND w.first_day <= {{to}}::date
              ))::int AS wallet_connections
       FROM app_users a
       WHERE a.app_id = {{app}} AND a.first_day BETWEEN {{from}}::date AND {{to}}::date AND a.campaign <> ''${conditions}
       GROUP BY a.campaign ORDER BY new_users DESC, a.campaign LIMIT ${MAX_CAMPAIGNS}`,
        params,
      ),
    );
    return { campaigns };
  }
}

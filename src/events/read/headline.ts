// The dashboard's first screen: active users, new users, sessions, D1 and D7 retention and Stars revenue over the
// period, each with its change over the period's complete days against as many days just before, and their daily
// series.
import { addDays, DAY_MS, isoDayOf, type Period } from '../days.ts';
import { type Filter, NO_FILTER } from './filters.ts';
import type { Cohort, InsightsReader } from './insights.ts';

export type HeadlineKey = 'users' | 'new_users' | 'sessions' | 'd1' | 'd7' | 'stars';

export interface HeadlineFigure {
  key: HeadlineKey;
  /** over the period (today so far included); a retention figure is a share (0..1), null when no cohort has reached the day */
  value: number | null;
  /** over the compared days: the period's days that are over */
  compared: number | null;
  /** over as many days just before */
  previous: number | null;
  /** counts: (compared - previous) / previous; shares: compared - previous (a difference of shares); null: none */
  change: number | null;
  /** how change reads: relative to the previous figure, or a difference of two shares */
  change_kind: 'relative' | 'points';
}

/** one day of the period for the first screen's chart (users and sessions are on the dashboard's days) */
export interface HeadlineDay {
  day: string;
  new_users: number;
  /** of the users first seen this day, the share back the next day; null until that day is over */
  d1: number | null;
  /** the same seven days later */
  d7: number | null;
  /** left out where revenue is not shown (a public link) */
  stars?: number;
}

export interface Headline {
  /** the days compared: the period's days that are over (today, still under way, is left out) */
  compared: Period;
  /** as many days just before */
  previous: Period;
  /** today is in the period and left out of the comparison */
  today_left_out: boolean;
  figures: HeadlineFigure[];
  days: HeadlineDay[];
}

/** day k's retention of the cohorts whose day k is over (as the dashboard's retention card counts it) */
export function retentionOn(cohorts: Cohort[], k: number): number | null {
  const followed = cohorts.filter((cohort) => cohort.retained.length > k && cohort.complete > k);
  const users = followed.reduce((sum, cohort) => sum + cohort.users, 0);
  return users > 0 ? followed.reduce((sum, cohort) => sum + cohort.retained[k]!, 0) / users : null;
}

function figure(
  key: HeadlineKey,
  value: number | null,
  compared: number | null,
  previous: number | null,
): HeadlineFigure {
  const points = key === 'd1' || key === 'd7';
  let change: number | null = null;
  if (compared !== null && previous !== null) {
    if (points) change = compared - previous;
    else if (previous > 0) change = (compared - previous) / previous;
  }
  return { key, value, compared, previous, change, change_kind: points ? 'points' : 'relative' };
}

/** the period's days that are over, and as many before them; a period of today alone compares today with yesterday */
export function comparedPeriods(
  period: Period,
  now: number,
): { compared: Period; previous: Period; todayLeftOut: boolean } {
  const yesterday = addDays(isoDayOf(now), -1);
  const todayLeftOut = period.to > yesterday && period.from <= yesterday;
  const compared = todayLeftOut ? { from: period.from, to: yesterday } : period;
  const length = Math.round((Date.parse(compared.to) - Date.parse(compared.from)) / DAY_MS) + 1;
  return {
    compared,
    previous: { from: addDays(compared.from, -length), to: addDays(compared.from, -1) },
    todayLeftOut,
  };
}

export interface HeadlineOptions {
  filter?: Filter;
  /** Stars revenue among the figures (when the app has any); a public link leaves it out */
  revenue?: boolean;
  now?: number;
}

const NO_REVENUE = { stars: 0, days: [] as { day: string; stars: number }[] };

export async function readHeadline(
  insights: InsightsReader,
  appId: number,
  period: Period,
  { filter = NO_FILTER, revenue: withRevenue = true, now = Date.now() }: HeadlineOptions = {},
): Promise<Headline> {
  const { compared, previous, todayLeftOut } = comparedPeriods(period, now);
  const revenueOf = async (span: Period) => (withRevenue ? insights.revenue(appId, span, filter) : NO_REVENUE);
  // the reads go one after another (each a few queries at once), so a page holds few of the store's waiting places
  // however many people load it; without today in the period the compared days are the period, read once
  const wholeSummary = await insights.summary(appId, period, filter);
  const summary = {
    whole: wholeSummary,
    compared: todayLeftOut ? await insights.summary(appId, compared, filter) : wholeSummary,
    before: await insights.summary(appId, previous, filter),
  };
  // the cohorts of the period hold the compared days' retention: a cell on today is never counted
  const [cohortsOfPeriod, cohortsBefore] = await Promise.all([
    insights.retention(appId, period, filter),
    insights.retention(appId, previous, filter),
  ]);
  // the period's revenue by day holds the compared days' (its total is the sum of its days)
  const revenueOfPeriod = await revenueOf(period);
  const revenueBefore = await revenueOf(previous);
  const comparedStars = revenueOfPeriod.days
    .filter((day) => day.day <= compared.to)
    .reduce((sum, day) => sum + day.stars, 0);
  const counted = (key: 'users' | 'new_users' | 'sessions') =>
    figure(key, summary.whole[key], summary.compared[key], summary.before[key]);
  const retained = (key: 'd1' | 'd7', k: number) => {
    const overPeriod = retentionOn(cohortsOfPeriod.cohorts, k);
    return figure(key, overPeriod, overPeriod, retentionOn(cohortsBefore.cohorts, k));
  };
  const figures = [counted('users'), counted('new_users'), counted('sessions'), retained('d1', 1), retained('d7', 7)];
  // revenue is a headline only for an app that has any
  if (revenueOfPeriod.stars !== 0 || revenueBefore.stars !== 0)
    figures.push(figure('stars', revenueOfPeriod.stars, comparedStars, revenueBefore.stars));
  const cohorts = new Map(cohortsOfPeriod.cohorts.map((cohort) => [cohort.day, cohort]));
  const stars = new Map(revenueOfPeriod.days.map((day) => [day.day, day.stars]));
  const days: HeadlineDay[] = [];
  for (let day = period.from; day <= period.to; day = addDays(day, 1)) {
    const cohort = cohorts.get(day);
    const share = (k: number) =>
      cohort && cohort.users > 0 && cohort.retained.length > k && cohort.complete > k
        ? cohort.retained[k]! / cohort.users
        : null;
    const row: HeadlineDay = { day, new_users: cohort?.users ?? 0, d1: share(1), d7: share(7) };
    if (withRevenue) row.stars = stars.get(day) ?? 0;
    days.push(row);
  }
  return { compared, previous, today_left_out: todayLeftOut, figures, days };
}

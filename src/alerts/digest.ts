// The weekly digest of an app: users, new users, day-7 retention and top events of a week (Monday to Sunday, UTC),
// each with its change against the week before.
import { named } from '../db/named-sql.ts';
import type { SqlReader } from '../db/sql.ts';
import { escapeTelegramHtml as escapeHtml } from '../platform/html.ts';
import { addDays } from '../events/days.ts';
import { InsightsReader } from '../events/read/insights.ts';
import type { Period } from '../events/read/dashboard.ts';

const TOP_EVENTS = 5;

/** "+12%", "−5%", "new" or "" (nothing to compare with) */
function change(now: number, before: number): string {
  if (before === 0) return now === 0 ? '' : ' (new)';
  const percent = Math.round((100 * (now - before)) / before);
  return ` (${percent >= 0 ? '+' : '−'}${Math.abs(percent)}%)`;
}

/**
 * Of the users new in the seven days before the week, the share active seven days after their first day: every such
 * day falls inside the week, so the figure is final when the digest goes out.
 */
async function daySevenRetention(reader: InsightsReader, appId: number, week: Period): Promise<number | null> {
  const cohorts = (await reader.retention(appId, { from: addDays(week.from, -7), to: week.to })).cohorts.filter(
    (cohort) => cohort.day < week.from,
  );
  const users = cohorts.reduce((sum, cohort) => sum + cohort.users, 0);
  const back = cohorts.reduce((sum, cohort) => sum + (cohort.retained[7] ?? 0), 0);
  return users === 0 ? null : back / users;
}

export async function weeklyDigest(sql: SqlReader, appId: number, appName: string, monday: string): Promise<string> {
  const reader = new InsightsReader(sql);
  const week = { from: monday, to: addDays(monday, 6) };
  const before = { from: addDays(monday, -7), to: addDays(monday, -1) };
  const [now, then, retention, retentionBefore, top] = await Promise.all([
    reader.summary(appId, week),
    reader.summary(appId, before),
    daySevenRetention(reader, appId, week),
    daySevenRetention(reader, appId, before),
    sql.query<{ event_name: string; events: number }>(
      ...named(
        `SELECT event_name, sum(events)::float8 AS events FROM daily_event_counts
         WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT ${TOP_EVENTS}`,
        { app: appId, from: week.from, to: week.to },
      ),
    ),
  ]);
  const percent = (share: number | null) => (share === null ? '—' : `${Math.round(share * 100)}%`);
  return [
    `📊 <b>${escapeHtml(appName)}</b>, week of ${week.from} to ${week.to}`,
    `Users: ${now.users}${change(now.users, then.users)}`,
    `New users: ${now.new_users}${change(now.new_users, then.new_users)}`,
    `Day-7 retention: ${percent(retention)} (week before: ${percent(retentionBefore)})`,
    `Events: ${now.events}${change(now.events, then.events)}`,
    top.length === 0
      ? 'No events this week.'
      : `Top events: ${top.map((row) => `${escapeHtml(row.event_name)} ${row.events}`).join(', ')}`,
  ].join('\n');
}

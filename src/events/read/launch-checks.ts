// What the launch checks found for an app over a period: its verified users, and its app-init events by outcome with
// what each outcome means to its owner (the same words in the bot, the site, the CLI and the read API).
import { named } from '../../db/named-sql.ts';
import type { SqlReader } from '../../db/sql.ts';
import { LAUNCH_OUTCOMES, type LaunchOutcome } from '../request/launch-check.ts';
import type { Period } from '../days.ts';

export interface LaunchChecks {
  /** app-init events of the period, whatever their outcome */
  launches: number;
  /** launches by outcome, every outcome present (0 when none) */
  outcomes: Record<LaunchOutcome, number>;
  /** distinct users with a verified launch whose auth_date falls in the period */
  verifiedUsers: number;
  /** sessions whose launch verified in the period */
  verifiedSessions: number;
}

/** what an outcome means, for the owner: "N launches …" */
export const OUTCOME_TEXT: Record<LaunchOutcome, string> = {
  verified: 'verified: signed by Telegram for this bot and user',
  no_proof:
    "sent no launch data (the official @telegram-apps/analytics client and pages without this service's SDK never do)",
  no_bot_id: 'could not be checked: the app has no bot id (the number before ":" in the bot\'s token)',
  bad_signature: "carried launch data whose signature does not check for this app's bot (altered or made up)",
  other_bot: "carried a launch Telegram signed for another app's bot",
  expired: 'carried launch data signed too long ago (or ahead of this clock)',
  other_user: "carried another user's launch data",
  replayed: 'carried launch data that had already verified another session',
  test_environment:
    "were signed in Telegram's test environment, where accounts are made at will: not counted as verified or in the catalog",
  malformed: 'carried launch data that cannot be read',
};

/** SQL: verified users and sessions of an app whose verified day is in the period */
const VERIFIED = `SELECT count(DISTINCT user_key)::int AS users, count(*)::int AS sessions FROM verified_sessions
  WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date`;

/** SQL: the verified users of the period alone, for a statement of other figures (parameters app, from, to) */
export const VERIFIED_USERS = `SELECT count(DISTINCT user_key)::int FROM verified_sessions
  WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date`;

/** distinct verified users of the period (their launch's signed day in it) */
export async function verifiedUsers(sql: SqlReader, appId: number, period: Period): Promise<number> {
  const [row] = await sql.query<{ users: number }>(
    ...named(VERIFIED, { app: appId, from: period.from, to: period.to }),
  );
  return row?.users ?? 0;
}

export async function readLaunchChecks(sql: SqlReader, appId: number, period: Period): Promise<LaunchChecks> {
  // one statement: a page reads these beside many other figures, and the store lets a bounded number of reads wait
  const [row] = await sql.query<{ outcomes: Record<string, number> | string; users: number; sessions: number }>(
    ...named(
      `SELECT (SELECT coalesce(jsonb_object_agg(outcome, launches), '{}'::jsonb) FROM (
                 SELECT outcome, sum(launches)::float8 AS launches FROM daily_launch_checks
                 WHERE app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date GROUP BY 1) o) AS outcomes,
              v.users, v.sessions
       FROM (${VERIFIED}) v`,
      { app: appId, from: period.from, to: period.to },
    ),
  );
  const counted = typeof row?.outcomes === 'string' ? JSON.parse(row.outcomes) : (row?.outcomes ?? {});
  const outcomes = Object.fromEntries(LAUNCH_OUTCOMES.map((outcome) => [outcome, 0])) as Record<LaunchOutcome, number>;
  let launches = 0;
  for (const [outcome, n] of Object.entries(counted as Record<string, number>)) {
    if (outcome in outcomes) outcomes[outcome as LaunchOutcome] += n;
    launches += n;
  }
  return { launches, outcomes, verifiedUsers: row?.users ?? 0, verifiedSessions: row?.sessions ?? 0 };
}

/** launch checks as the site's API and the CLI give them: the counts, and the outcomes to look at in words */
export function launchChecksDocument(checks: LaunchChecks) {
  return {
    launches: checks.launches,
    verified_users: checks.verifiedUsers,
    verified_sessions: checks.verifiedSessions,
    outcomes: checks.outcomes,
    unverified: unverifiedOutcomes(checks).map(({ outcome, launches }) => ({
      outcome,
      launches,
      text: OUTCOME_TEXT[outcome],
    })),
  };
}

/** the outcomes other than verified that happened, most first: what the owner should look at */
export function unverifiedOutcomes(checks: LaunchChecks): { outcome: LaunchOutcome; launches: number }[] {
  return LAUNCH_OUTCOMES.filter((outcome) => outcome !== 'verified' && checks.outcomes[outcome] > 0)
    .map((outcome) => ({ outcome, launches: checks.outcomes[outcome] }))
    .sort((a, b) => b.launches - a.launches);
}

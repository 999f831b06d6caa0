// The ranking's formula: the targets, weights and minimum of active users, each scored part from an app's counts over
// the two windows, the score, and the formula as the catalog publishes it.
import { ratio } from '../events/ratio.ts';
import { groupedNumber } from './number-text.ts';

/** an app needs at least this many distinct verified users in the last 30 days to be ranked */
export const MIN_ACTIVE_USERS_30D = 20;

/**
 * Count metrics are log-scaled against these targets: n(x) = min(1, ln(1 + x) / ln(1 + target)).
 * Reaching the target gives the full part; each factor of ten below it costs about the same.
 */
export const TARGETS = {
  activeUsers: 100_000,
  eventsPerUser: 100,
  walletConnections: 10_000,
  signedTransactions: 10_000,
} as const;

/** weights of the five parts; they add up to 1, so the score is 0..100 */
export const WEIGHTS = {
  reach: 0.25,
  retention: 0.25,
  engagement: 0.15,
  walletConnections: 0.15,
  signedTransactions: 0.2,
} as const;

/** the weighted sum as printed: "0.25·reach + … + 0.20·signed transactions" */
const WEIGHTED_PARTS = (
  [
    [WEIGHTS.reach, 'reach'],
    [WEIGHTS.retention, 'retention'],
    [WEIGHTS.engagement, 'engagement'],
    [WEIGHTS.walletConnections, 'wallet connections'],
    [WEIGHTS.signedTransactions, 'signed transactions'],
  ] as const
)
  .map(([weight, part]) => `${weight.toFixed(2)}·${part}`)
  .join(' + ');

export const FORMULA =
  "only verified activity counts: users whose launch Telegram signed (Ed25519, for the app's bot), on the day it signed, " +
  'and what the page reported in those sessions; ' +
  `score = 100 × (${WEIGHTED_PARTS}); ` +
  'each part is the mean of its 7-day and 30-day values; reach is verified users; retention is the share of verified ' +
  'users with signed launches on 2 or more days; engagement is events of verified sessions per verified user; wallet ' +
  'connections and signed transactions are verified users who completed one; ' +
  'counts are log-scaled, n(x) = min(1, ln(1+x)/ln(1+target)), ' +
  `with targets of ${groupedNumber(TARGETS.activeUsers)} verified users, ${groupedNumber(TARGETS.eventsPerUser)} events per user, ` +
  `${groupedNumber(TARGETS.walletConnections)} wallet connections and ${groupedNumber(TARGETS.signedTransactions)} signed transactions; ` +
  `apps with fewer than ${MIN_ACTIVE_USERS_30D} verified users in 30 days are not ranked, and apps without a verified ` +
  'launch in 30 days are not listed.';

/** the five scored parts, each 0..1 */
export interface ScoreParts {
  reach: number;
  retention: number;
  engagement: number;
  wallet_connections: number;
  signed_transactions: number;
}

/** an app's counts over the last 7 and 30 days, which the parts are computed from */
export interface WindowCounts {
  users7: number;
  users30: number;
  returning7: number;
  returning30: number;
  events7: number;
  events30: number;
  connections7: number;
  connections30: number;
  transactions7: number;
  transactions30: number;
}

/** a share for scoring and for the published metrics: an app without users has none of it */
export function shareOrZero(part: number, whole: number): number {
  return ratio(part, whole) ?? 0;
}

/** log-scaled 0..1 against a target */
function scaled(value: number, target: number): number {
  return Math.min(1, Math.log1p(Math.max(0, value)) / Math.log1p(target));
}

/** the parts from exact (unrounded) window values; mean of the 7-day and 30-day value of each */
export function scoreParts(counts: WindowCounts): ScoreParts {
  const { users7, users30, returning7, returning30 } = counts;
  const mean = (week: number, month: number) => (week + month) / 2;
  return {
    reach: mean(scaled(users7, TARGETS.activeUsers), scaled(users30, TARGETS.activeUsers)),
    retention: mean(shareOrZero(returning7, users7), shareOrZero(returning30, users30)),
    engagement: mean(
      scaled(shareOrZero(counts.events7, users7), TARGETS.eventsPerUser),
      scaled(shareOrZero(counts.events30, users30), TARGETS.eventsPerUser),
    ),
    wallet_connections: mean(
      scaled(counts.connections7, TARGETS.walletConnections),
      scaled(counts.connections30, TARGETS.walletConnections),
    ),
    signed_transactions: mean(
      scaled(counts.transactions7, TARGETS.signedTransactions),
      scaled(counts.transactions30, TARGETS.signedTransactions),
    ),
  };
}

/** 0..100: the weighted sum of the parts */
export function scoreOf(parts: ScoreParts): number {
  return (
    100 *
    (WEIGHTS.reach * parts.reach +
      WEIGHTS.retention * parts.retention +
      WEIGHTS.engagement * parts.engagement +
      WEIGHTS.walletConnections * parts.wallet_connections +
      WEIGHTS.signedTransactions * parts.signed_transactions)
  );
}

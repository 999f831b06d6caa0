// Revenue of an app over a period: Telegram Stars per day, paying users and the conversion from purchase-init to
// purchase-success, read from the period's payment events by name (a partial index holds those events alone, so the
// read stays bounded by the payment events, never the app's whole traffic, and other events cost ingestion nothing).
import type { SqlReader } from '../db/sql.ts';
import { type Filter, filterSql, firstSeenColumns, NO_FILTER } from './filters.ts';
import type { Period } from './rollups.ts';

/** Telegram Stars' currency code */
export const STARS = 'XTR';

export interface RevenueDay {
  day: string;
  /** Stars paid that day (successful-payment) less Stars refunded that day (refunded-payment) */
  stars: number;
  payments: number;
  refunds: number;
  /** distinct users with a successful-payment or a purchase-success that day */
  paying_users: number;
}

export interface Revenue {
  currency: typeof STARS;
  /** net Stars of the period: paid less refunded */
  stars: number;
  stars_paid: number;
  stars_refunded: number;
  /** successful-payment events in Stars (from the integrator's bot, with a server key); other currencies are left out */
  payments: number;
  refunds: number;
  /** distinct users of the period with a successful-payment or a purchase-success */
  paying_users: number;
  /** the official client's purchase events of the period */
  purchase_init: number;
  purchase_success: number;
  /** purchase_success / purchase_init; null without any purchase-init */
  conversion: number | null;
  /** the days with any payment event, in order */
  days: RevenueDay[];
}

/** the events of the partial index events_app_id_payment_day_idx: its predicate, character for character */
export const PAYMENT_EVENT_NAMES = `('purchase-init', 'purchase-success', 'successful-payment', 'refunded-payment')`;
const PAYER_NAMES = `('purchase-success', 'successful-payment')`;
/** the event's amount when it is in Stars (validated at ingest: an integer), else 0 */
const STARS_AMOUNT = `CASE WHEN props->'custom_data'->>'currency' = '${STARS}' AND jsonb_typeof(props->'custom_data'->'amount') = 'number'
  THEN (props->'custom_data'->>'amount')::numeric ELSE 0 END`;

type CountRow = { day: string; name: string; events: number; in_stars: number; stars: number };
type PayerRow = { day: string | null; users: number };

export async function readRevenue(
  sql: SqlReader,
  appId: number,
  period: Period,
  filter: Filter = NO_FILTER,
): Promise<Revenue> {
  const params: unknown[] = [appId, period.from, period.to];
  // revenue belongs to the user who pays: the filter keeps the payments of users first seen with its attributes, so a
  // campaign counts what its users paid, in the bot (whose payments carry no start_param) or in the mini app
  const onUsers = filterSql(filter, firstSeenColumns('a'), params);
  const ofUsers = onUsers ? ` AND user_key IN (SELECT a.user_key FROM app_users a WHERE a.app_id = $1${onUsers})` : '';
  const where = `app_id = $1 AND event_name IN ${PAYMENT_EVENT_NAMES} AND day BETWEEN $2::date AND $3::date${ofUsers}`;
  const [counts, payers] = await Promise.all([
    sql.query<CountRow>(
      `SELECT day::text AS day, event_name AS name, count(*)::int AS events,
              (count(*) FILTER (WHERE props->'custom_data'->>'currency' = '${STARS}'))::int AS in_stars,
              coalesce(sum(${STARS_AMOUNT}), 0)::float8 AS stars
       FROM events WHERE ${where} GROUP BY 1, 2`,
      params,
    ),
    // per day and over the whole period (the null day): a user paying on two days is one paying user of the period
    sql.query<PayerRow>(
      `SELECT day::text AS day, count(DISTINCT user_key)::int AS users
       FROM events WHERE ${where} AND event_name IN ${PAYER_NAMES}
       GROUP BY GROUPING SETS ((day), ())`,
      params,
    ),
  ]);
  const days = new Map<string, RevenueDay>();
  const dayOf = (day: string) => {
    let entry = days.get(day);
    if (!entry) days.set(day, (entry = { day, stars: 0, payments: 0, refunds: 0, paying_users: 0 }));
    return entry;
  };
  const totals = { paid: 0, refunded: 0, payments: 0, refunds: 0, init: 0, success: 0 };
  for (const row of counts) {
    const entry = dayOf(row.day);
    if (row.name === 'successful-payment') {
      entry.stars += row.stars;
      entry.payments += row.in_stars;
      totals.paid += row.stars;
      totals.payments += row.in_stars;
    } else if (row.name === 'refunded-payment') {
      entry.stars -= row.stars;
      entry.refunds += row.in_stars;
      totals.refunded += row.stars;
      totals.refunds += row.in_stars;
    } else if (row.name === 'purchase-init') totals.init += row.events;
    else totals.success += row.events;
  }
  let payingUsers = 0;
  for (const row of payers) {
    if (row.day === null) payingUsers = row.users;
    else dayOf(row.day).paying_users = row.users;
  }
  return {
    currency: STARS,
    stars: totals.paid - totals.refunded,
    stars_paid: totals.paid,
    stars_refunded: totals.refunded,
    payments: totals.payments,
    refunds: totals.refunds,
    paying_users: payingUsers,
    purchase_init: totals.init,
    purchase_success: totals.success,
    conversion: totals.init === 0 ? null : totals.success / totals.init,
    days: [...days.values()].sort((a, b) => a.day.localeCompare(b.day)),
  };
}

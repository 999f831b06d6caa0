// Revenue of an app over a period: Telegram Stars per day by source (the integrator's bot, the Mini App itself),
// paying users and the conversion from purchase-init to purchase-success, read from the period's payment events by
// name and the register-invoice events of their slugs (partial indexes hold those events alone, so the read stays
// bounded by the payment events, never the app's whole traffic, and other events cost ingestion nothing).
import { named } from '../../db/named-sql.ts';
import type { SqlReader } from '../../db/sql.ts';
import { type Filter, filterConditions, filterValues, firstSeenColumns, NO_FILTER } from './filters.ts';
import type { Period } from './dashboard.ts';
import { MAX_PAYMENT_AMOUNT } from '../request/schema.ts';

/** Telegram Stars' currency code */
export const STARS = 'XTR';

export interface RevenueDay {
  day: string;
  /** Stars paid that day (both sources) less Stars refunded that day (refunded-payment) */
  stars: number;
  /** Stars of that day's successful-payment events, sent by the integrator's bot */
  stars_from_bot: number;
  /** Stars of that day's purchase-success events priced by their register-invoice, which the bot did not report */
  stars_from_mini_app: number;
  /** payments in Stars that day, both sources */
  payments: number;
  refunds: number;
  /** distinct users with a successful-payment or a purchase-success that day */
  paying_users: number;
}

export interface Revenue {
  currency: typeof STARS;
  /** net Stars of the period: paid (both sources) less refunded */
  stars: number;
  /** stars_from_bot + stars_from_mini_app */
  stars_paid: number;
  /** refunded-payment events in Stars, from the bot */
  stars_refunded: number;
  /** Stars of the successful-payment events (from the integrator's bot, with a server key) */
  stars_from_bot: number;
  /** Stars of the purchase-success events priced by the register-invoice of their slug, less those the bot reported */
  stars_from_mini_app: number;
  /** payments_from_bot + payments_from_mini_app */
  payments: number;
  /** successful-payment events in Stars; other currencies are left out */
  payments_from_bot: number;
  /** purchase-success events counted in stars_from_mini_app */
  payments_from_mini_app: number;
  refunds: number;
  /** distinct users of the period with a successful-payment or a purchase-success */
  paying_users: number;
  /** the official client's purchase events of the period */
  purchase_init: number;
  purchase_success: number;
  /** purchase-success events whose slug has no register-invoice in Stars: purchases, never Stars */
  purchase_success_unpriced: number;
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

/**
 * An invoice's slug as the register-invoice and purchase-* events carry it, reduced to the slug itself: the part after
 * a leading "$" or the last "/" of a t.me link (a slug is [A-Za-z0-9_=-]), at most 200 characters. The expression of
 * the partial index events_app_id_invoice_slug_idx (migration 20261127100000_invoice_slugs), character for character.
 */
export const invoiceSlug = (alias: string) => `left(regexp_replace(${alias}.props->>'slug', '^.*[$/]', ''), 200)`;

/**
 * The Stars an invoice (a register-invoice's props) asks: the sum of its prices when its currency is XTR and every
 * price is a whole number of Stars in range; null otherwise (another currency, or prices that cannot be read).
 */
const invoiceStars = (
  props: string,
) => `CASE WHEN ${props}->>'currency' = '${STARS}' AND jsonb_typeof(${props}->'prices') = 'array' THEN (
    SELECT CASE WHEN count(*) > 0 AND count(amount) = count(*) AND bool_and(amount = trunc(amount) AND amount BETWEEN 0 AND ${MAX_PAYMENT_AMOUNT})
      THEN sum(amount) END
    FROM (SELECT CASE WHEN jsonb_typeof(price->'amount') = 'number' THEN (price->>'amount')::numeric END AS amount
          FROM jsonb_array_elements(${props}->'prices') AS price) AS prices) END`;

/** how far apart (either way) a Mini App purchase and the bot's successful-payment for it may be */
export const SAME_PURCHASE_WITHIN = '1 day';

type CountRow = { day: string; name: string; events: number; in_stars: number; stars: number };
type PayerRow = { day: string | null; users: number };
type MiniAppRow = { day: string | null; payments: number; stars: number; unpriced: number };

/**
 * The period's purchase-success events by day, as Stars from the Mini App: each priced by the register-invoice of its
 * slug in the app (the latest at or before the purchase, else the first after it: an invoice may be registered long
 * before the period, or arrive after the purchase), unless the bot sent a successful-payment for the same purchase:
 * the same user, within SAME_PURCHASE_WITHIN, with the invoice's payload as invoice_payload (where either side has no
 * payload: the same Stars). A null day holds the purchases without a price in Stars, which count as purchases only.
 */
function miniAppSql(ofUsers: string): string {
  const registered = `r.app_id = {{app}} AND r.event_name = 'register-invoice' AND ${invoiceSlug('r')} = s.slug`;
  return `WITH priced AS MATERIALIZED (
    SELECT s.day, s.user_key, s.occurred_at, invoice.stars, invoice.payload
    FROM (SELECT day, user_key, occurred_at, ${invoiceSlug('events')} AS slug
          FROM events WHERE app_id = {{app}} AND event_name = 'purchase-success' AND day BETWEEN {{from}}::date AND {{to}}::date${ofUsers}) AS s
    LEFT JOIN LATERAL (SELECT r.props FROM events r WHERE ${registered} AND r.occurred_at <= s.occurred_at
                       ORDER BY r.occurred_at DESC LIMIT 1) AS earlier ON true
    LEFT JOIN LATERAL (SELECT r.props FROM events r WHERE earlier.props IS NULL AND ${registered} AND r.occurred_at > s.occurred_at
                       ORDER BY r.occurred_at LIMIT 1) AS later ON true
    CROSS JOIN LATERAL (SELECT ${invoiceStars('coalesce(earlier.props, later.props)')} AS stars,
                               coalesce(earlier.props, later.props)->>'payload' AS payload) AS invoice
  )
  SELECT day::text AS day, count(*)::int AS payments, sum(stars)::float8 AS stars, 0 AS unpriced
  FROM priced p
  WHERE stars IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM events b
    WHERE b.app_id = {{app}} AND b.event_name = 'successful-payment'
      AND b.day BETWEEN {{from}}::date - 1 AND {{to}}::date + 1
      AND b.user_key = p.user_key
      AND b.occurred_at BETWEEN p.occurred_at - interval '${SAME_PURCHASE_WITHIN}' AND p.occurred_at + interval '${SAME_PURCHASE_WITHIN}'
      AND CASE WHEN p.payload IS NOT NULL AND jsonb_typeof(b.props->'custom_data'->'invoice_payload') = 'string'
            THEN b.props->'custom_data'->>'invoice_payload' = p.payload
            ELSE b.props->'custom_data'->>'currency' = '${STARS}' AND CASE WHEN jsonb_typeof(b.props->'custom_data'->'amount') = 'number'
              THEN (b.props->'custom_data'->>'amount')::numeric = p.stars ELSE false END END)
  GROUP BY day
  UNION ALL
  SELECT NULL, 0, 0, count(*)::int FROM priced WHERE stars IS NULL`;
}

export async function readRevenue(
  sql: SqlReader,
  appId: number,
  period: Period,
  filter: Filter = NO_FILTER,
): Promise<Revenue> {
  const params = { app: appId, from: period.from, to: period.to, ...filterValues(filter) };
  // revenue belongs to the user who pays: the filter keeps the payments of users first seen with its attributes, so a
  // campaign counts what its users paid, in the bot (whose payments carry no start_param) or in the mini app
  const onUsers = filterConditions(filter, firstSeenColumns('a'));
  const ofUsers = onUsers
    ? ` AND user_key IN (SELECT a.user_key FROM app_users a WHERE a.app_id = {{app}}${onUsers})`
    : '';
  const where = `app_id = {{app}} AND event_name IN ${PAYMENT_EVENT_NAMES} AND day BETWEEN {{from}}::date AND {{to}}::date${ofUsers}`;
  const [counts, payers, miniApp] = await Promise.all([
    sql.query<CountRow>(
      ...named(
        `SELECT day::text AS day, event_name AS name, count(*)::int AS events,
                (count(*) FILTER (WHERE props->'custom_data'->>'currency' = '${STARS}'))::int AS in_stars,
                coalesce(sum(${STARS_AMOUNT}), 0)::float8 AS stars
         FROM events WHERE ${where} GROUP BY 1, 2`,
        params,
      ),
    ),
    // per day and over the whole period (the null day): a user paying on two days is one paying user of the period
    sql.query<PayerRow>(
      ...named(
        `SELECT day::text AS day, count(DISTINCT user_key)::int AS users
         FROM events WHERE ${where} AND event_name IN ${PAYER_NAMES}
         GROUP BY GROUPING SETS ((day), ())`,
        params,
      ),
    ),
    sql.query<MiniAppRow>(...named(miniAppSql(ofUsers), params)),
  ]);
  const days = new Map<string, RevenueDay>();
  const dayOf = (day: string) => {
    let entry = days.get(day);
    if (!entry) {
      entry = { day, stars: 0, stars_from_bot: 0, stars_from_mini_app: 0, payments: 0, refunds: 0, paying_users: 0 };
      days.set(day, entry);
    }
    return entry;
  };
  const totals = { bot: 0, miniApp: 0, refunded: 0, botPayments: 0, miniAppPayments: 0, refunds: 0 };
  const purchases = { init: 0, success: 0, unpriced: 0 };
  for (const row of counts) {
    const entry = dayOf(row.day);
    if (row.name === 'successful-payment') {
      entry.stars += row.stars;
      entry.stars_from_bot += row.stars;
      entry.payments += row.in_stars;
      totals.bot += row.stars;
      totals.botPayments += row.in_stars;
    } else if (row.name === 'refunded-payment') {
      entry.stars -= row.stars;
      entry.refunds += row.in_stars;
      totals.refunded += row.stars;
      totals.refunds += row.in_stars;
    } else if (row.name === 'purchase-init') purchases.init += row.events;
    else purchases.success += row.events;
  }
  for (const row of miniApp) {
    if (row.day === null) {
      purchases.unpriced = row.unpriced;
      continue;
    }
    const entry = dayOf(row.day);
    entry.stars += row.stars;
    entry.stars_from_mini_app += row.stars;
    entry.payments += row.payments;
    totals.miniApp += row.stars;
    totals.miniAppPayments += row.payments;
  }
  let payingUsers = 0;
  for (const row of payers) {
    if (row.day === null) payingUsers = row.users;
    else dayOf(row.day).paying_users = row.users;
  }
  return {
    currency: STARS,
    stars: totals.bot + totals.miniApp - totals.refunded,
    stars_paid: totals.bot + totals.miniApp,
    stars_refunded: totals.refunded,
    stars_from_bot: totals.bot,
    stars_from_mini_app: totals.miniApp,
    payments: totals.botPayments + totals.miniAppPayments,
    payments_from_bot: totals.botPayments,
    payments_from_mini_app: totals.miniAppPayments,
    refunds: totals.refunds,
    paying_users: payingUsers,
    purchase_init: purchases.init,
    purchase_success: purchases.success,
    purchase_success_unpriced: purchases.unpriced,
    conversion: purchases.init === 0 ? null : purchases.success / purchases.init,
    days: [...days.values()].sort((a, b) => a.day.localeCompare(b.day)),
  };
}

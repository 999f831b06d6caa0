// Revenue of an app over a period: Telegram Stars per day by source (the integrator's bot, and the Mini App in sessions
// whose launch Telegram signed), paying users and the conversion from purchase-init to purchase-success, read from the
// period's payment events by name and the register-invoice events of their slugs (partial indexes hold those events
// alone, so the read stays bounded by the payment events, never the app's whole traffic). What a page reported in a
// session Telegram did not sign is shown apart, never added: a page holds the app's public token, so anyone can send it.
import { named } from '../../db/named-sql.ts';
import type { SqlReader } from '../../db/sql.ts';
import { type Filter, filterConditions, filterValues, firstSeenColumns, NO_FILTER } from './filters.ts';
import type { Period } from './dashboard.ts';
import { MAX_PAYMENT_AMOUNT } from '../request/schema.ts';
import { isCompleteDay } from '../days.ts';

/** Telegram Stars' currency code */
export const STARS = 'XTR';

export interface RevenueDay {
  day: string;
  /** Stars paid that day (the bot's, and the Mini App's in verified sessions) less Stars refunded that day */
  stars: number;
  /** Stars of that day's successful-payment events, sent by the integrator's bot */
  stars_from_bot: number;
  /** Stars of that day's purchase-success events in verified sessions, priced by their invoice, the bot not reporting them */
  stars_from_mini_app: number;
  /** payments in Stars that day, both sources */
  payments: number;
  refunds: number;
  /** distinct users with a successful-payment or a purchase-success in a verified session that day */
  paying_users: number;
  /** false for today (UTC): still growing */
  complete: boolean;
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
  /** Stars of the purchase-success events of verified sessions, priced by their invoice, less those the bot reported */
  stars_from_mini_app: number;
  /** payments_from_bot + payments_from_mini_app */
  payments: number;
  /** successful-payment events in Stars; other currencies are left out */
  payments_from_bot: number;
  /** purchase-success events counted in stars_from_mini_app */
  payments_from_mini_app: number;
  refunds: number;
  /** distinct users of the period with a successful-payment or a purchase-success in a verified session */
  paying_users: number;
  /** the official client's purchase events of the period, in verified sessions */
  purchase_init: number;
  purchase_success: number;
  /** purchase-success events of verified sessions without a price in Stars (no XTR invoice of one price): never Stars */
  purchase_success_unpriced: number;
  /**
   * of the invoices opened in verified sessions (a session and a slug with a purchase-init), the share that a
   * purchase-success of the same session followed; null without any
   */
  conversion: number | null;
  /** reported by pages in sessions Telegram did not sign: shown apart, never added to the figures above */
  unverified: {
    /** Stars their purchase-success events would be, at the invoice's price */
    stars: number;
    /** their purchase-success events priced in Stars */
    payments: number;
    purchase_success: number;
    /** distinct users with such a purchase-success */
    paying_users: number;
  };
  /** the days with any counted payment event, in order */
  days: RevenueDay[];
}

/** the events of the partial index events_app_id_payment_day_idx: its predicate, character for character */
export const PAYMENT_EVENT_NAMES = `('purchase-init', 'purchase-success', 'successful-payment', 'refunded-payment')`;
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
 * The Stars an invoice (a register-invoice's props) asks: its one price when its currency is XTR and that price is a
 * whole number of Stars in range (Telegram's own rule for Stars invoices: exactly one price); null otherwise (another
 * currency, several prices, or a price that cannot be read).
 */
const invoiceStars = (props: string) => `CASE WHEN ${props}->>'currency' = '${STARS}'
    AND jsonb_typeof(${props}->'prices') = 'array' AND jsonb_array_length(${props}->'prices') = 1
    AND jsonb_typeof(${props}->'prices'->0->'amount') = 'number'
    AND (${props}->'prices'->0->>'amount')::numeric = trunc((${props}->'prices'->0->>'amount')::numeric)
    AND (${props}->'prices'->0->>'amount')::numeric BETWEEN 0 AND ${MAX_PAYMENT_AMOUNT}
  THEN (${props}->'prices'->0->>'amount')::numeric END`;

/** SQL: the event (alias) came from a page in a session whose launch Telegram signed for the app */
export const inVerifiedSession = (alias: string) =>
  `(${alias}.sent_by_server IS NOT TRUE AND EXISTS (SELECT 1 FROM verified_sessions v
     WHERE v.app_id = ${alias}.app_id AND v.session_id = ${alias}.session_id))`;

/** how far apart (either way) a Mini App purchase and the bot's successful-payment for it may be */
export const SAME_PURCHASE_WITHIN = '1 day';

type CountRow = { day: string; name: string; events: number; in_stars: number; stars: number };
type PayerRow = { day: string | null; users: number };
type MiniAppRow = { day: string | null; verified: boolean; payments: number; stars: number; unpriced: number };
type PurchaseRow = {
  inits: number;
  successes: number;
  unverified_successes: number;
  unverified_users: number;
  opened: number;
  converted: number;
};

/**
 * The period's purchase-success events by day and by whether their session is verified, as Stars from the Mini App:
 * each priced by its slug's invoice in the app, the register-invoice received first in a verified session (wherever it
 * falls in time; a later registration, a page's word, cannot reprice it), unless the bot sent a successful-payment for
 * the same purchase: the same user, within SAME_PURCHASE_WITHIN, with the invoice's payload as invoice_payload (where
 * either side has no payload: the same Stars). A null day holds the purchases without a price in Stars.
 */
function miniAppSql(ofUsers: string): string {
  return `WITH purchases AS MATERIALIZED (
    SELECT e.day, e.user_key, e.occurred_at, ${invoiceSlug('e')} AS slug, ${inVerifiedSession('e')} AS verified
    FROM events e WHERE e.app_id = {{app}} AND e.event_name = 'purchase-success'
      AND e.day BETWEEN {{from}}::date AND {{to}}::date${ofUsers}
  ), invoices AS MATERIALIZED (
    SELECT s.slug, first.props FROM (SELECT DISTINCT slug FROM purchases) s
    CROSS JOIN LATERAL (SELECT r.props FROM events r
                        WHERE r.app_id = {{app}} AND r.event_name = 'register-invoice' AND ${invoiceSlug('r')} = s.slug
                          AND ${inVerifiedSession('r')}
                        ORDER BY r.received_at, r.occurred_at, r.event_key LIMIT 1) first
  ), priced AS MATERIALIZED (
    SELECT p.day, p.user_key, p.occurred_at, p.verified, ${invoiceStars('i.props')} AS stars, i.props->>'payload' AS payload
    FROM purchases p LEFT JOIN invoices i ON i.slug = p.slug
  )
  SELECT day::text AS day, verified, count(*)::int AS payments, sum(stars)::float8 AS stars, 0 AS unpriced
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
  GROUP BY day, verified
  UNION ALL
  SELECT NULL, verified, 0, 0, count(*)::int FROM priced WHERE stars IS NULL GROUP BY verified`;
}

export async function readRevenue(
  sql: SqlReader,
  appId: number,
  period: Period,
  filter: Filter = NO_FILTER,
  now: number = Date.now(),
): Promise<Revenue> {
  const params = { app: appId, from: period.from, to: period.to, ...filterValues(filter) };
  // revenue belongs to the user who pays: the filter keeps the payments of users first seen with its attributes, so a
  // campaign counts what its users paid, in the bot (whose payments carry no start_param) or in the mini app
  const onUsers = filterConditions(filter, firstSeenColumns('a'));
  const ofUsers = onUsers
    ? ` AND user_key IN (SELECT a.user_key FROM app_users a WHERE a.app_id = {{app}}${onUsers})`
    : '';
  const inPeriod = `app_id = {{app}} AND day BETWEEN {{from}}::date AND {{to}}::date${ofUsers}`;
  const fromBot = `${inPeriod} AND event_name IN ('successful-payment', 'refunded-payment')`;
  const purchases = `${inPeriod} AND event_name IN ('purchase-init', 'purchase-success')`;
  const [counts, payers, miniApp, [purchaseRow]] = await Promise.all([
    sql.query<CountRow>(
      ...named(
        `SELECT day::text AS day, event_name AS name, count(*)::int AS events,
                (count(*) FILTER (WHERE props->'custom_data'->>'currency' = '${STARS}'))::int AS in_stars,
                coalesce(sum(${STARS_AMOUNT}), 0)::float8 AS stars
         FROM events WHERE ${fromBot} GROUP BY 1, 2`,
        params,
      ),
    ),
    // per day and over the whole period (the null day): a user paying on two days is one paying user of the period
    sql.query<PayerRow>(
      ...named(
        `SELECT day::text AS day, count(DISTINCT user_key)::int AS users
         FROM events e WHERE ${inPeriod} AND (event_name = 'successful-payment'
           OR (event_name = 'purchase-success' AND ${inVerifiedSession('e')}))
         GROUP BY GROUPING SETS ((day), ())`,
        params,
      ),
    ),
    sql.query<MiniAppRow>(...named(miniAppSql(ofUsers), params)),
    // the purchase events by whether their session is verified, and per verified session and slug whether an invoice
    // opened (a purchase-init) was paid in it (a purchase-success)
    sql.query<PurchaseRow>(
      ...named(
        `WITH p AS MATERIALIZED (
           SELECT event_name, user_key, session_id, ${invoiceSlug('e')} AS slug, ${inVerifiedSession('e')} AS verified
           FROM events e WHERE ${purchases}
         ), invoices AS (
           SELECT bool_or(event_name = 'purchase-init') AS opened, bool_or(event_name = 'purchase-success') AS paid
           FROM p WHERE verified GROUP BY session_id, slug
         )
         SELECT count(*) FILTER (WHERE verified AND event_name = 'purchase-init')::int AS inits,
                count(*) FILTER (WHERE verified AND event_name = 'purchase-success')::int AS successes,
                count(*) FILTER (WHERE NOT verified AND event_name = 'purchase-success')::int AS unverified_successes,
                count(DISTINCT user_key) FILTER (WHERE NOT verified AND event_name = 'purchase-success')::int
                  AS unverified_users,
                (SELECT count(*) FILTER (WHERE opened) FROM invoices)::int AS opened,
                (SELECT count(*) FILTER (WHERE opened AND paid) FROM invoices)::int AS converted
         FROM p`,
        params,
      ),
    ),
  ]);
  const days = new Map<string, RevenueDay>();
  const dayOf = (day: string) => {
    let entry = days.get(day);
    if (!entry) {
      entry = {
        day,
        stars: 0,
        stars_from_bot: 0,
        stars_from_mini_app: 0,
        payments: 0,
        refunds: 0,
        paying_users: 0,
        complete: isCompleteDay(day, now),
      };
      days.set(day, entry);
    }
    return entry;
  };
  const totals = { bot: 0, miniApp: 0, refunded: 0, botPayments: 0, miniAppPayments: 0, refunds: 0 };
  for (const row of counts) {
    const entry = dayOf(row.day);
    if (row.name === 'successful-payment') {
      entry.stars += row.stars;
      entry.stars_from_bot += row.stars;
      entry.payments += row.in_stars;
      totals.bot += row.stars;
      totals.botPayments += row.in_stars;
    } else {
      entry.stars -= row.stars;
      entry.refunds += row.in_stars;
      totals.refunded += row.stars;
      totals.refunds += row.in_stars;
    }
  }
  const unverified = { stars: 0, payments: 0, purchase_success: 0, paying_users: 0 };
  let unpriced = 0;
  for (const row of miniApp) {
    if (!row.verified) {
      unverified.stars += row.stars;
      unverified.payments += row.payments;
      continue;
    }
    if (row.day === null) {
      unpriced += row.unpriced;
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
  const purchaseCounts = purchaseRow!;
  unverified.purchase_success = purchaseCounts.unverified_successes;
  unverified.paying_users = purchaseCounts.unverified_users;
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
    purchase_init: purchaseCounts.inits,
    purchase_success: purchaseCounts.successes,
    purchase_success_unpriced: unpriced,
    conversion: purchaseCounts.opened === 0 ? null : purchaseCounts.converted / purchaseCounts.opened,
    unverified,
    days: [...days.values()].sort((a, b) => a.day.localeCompare(b.day)),
  };
}

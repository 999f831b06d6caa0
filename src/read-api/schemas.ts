// The read API's route schemas: Fastify checks each request's parameters against them, serialises the answers with
// them, and /openapi.json describes the routes from them.
import { MAX_CAMPAIGNS, MAX_FUNNEL_STEPS, RETENTION_DAYS, TOP_PROPERTY_VALUES } from '../events/read/insights.ts';
import { SAME_PURCHASE_WITHIN } from '../events/read/revenue.ts';
import { textParameter } from '../platform/parameter-schema.ts';
import { MAX_PERIOD_DAYS } from './parameters.ts';

const DAY = { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$', maxLength: 10 } as const;
const COUNT = { type: 'integer', minimum: 0 } as const;
const message = { type: 'object', required: ['message'], properties: { message: { type: 'string' } } } as const;

const period = {
  from: {
    ...DAY,
    description: `first UTC day, inclusive (default: 29 days before "to"; at most ${MAX_PERIOD_DAYS} days)`,
  },
  to: { ...DAY, description: 'last UTC day, inclusive (default: today)' },
};

const TEXT = textParameter(64);
/** the filter every route takes */
const filter = {
  platform: { ...TEXT, description: 'only launches from this platform (tdesktop, android, ios, …)' },
  language: { ...TEXT, description: "only launches in this language (the user's language_code)" },
  premium: { type: 'string', enum: ['true', 'false'], description: 'only launches by Premium users, or by the others' },
  campaign: { ...TEXT, description: 'only launches with this start_param' },
  verified: {
    type: 'string',
    enum: ['true', 'false'],
    description:
      'true: only traffic Telegram signed (events of sessions whose launch verified; users with a verified launch); ' +
      'false: only the rest',
  },
};

const appParams = (extra: Record<string, object> = {}) => ({
  type: 'object',
  required: ['app', ...Object.keys(extra)],
  properties: { app: { ...textParameter(64), description: "the app's app_name" }, ...extra },
});

const query = (extra: Record<string, object> = {}) => ({
  type: 'object',
  properties: { ...period, ...filter, ...extra },
});

/** every answer names the period it counts, as parsed: the defaults filled in */
const PERIOD_ANSWER = {
  type: 'object',
  required: ['from', 'to'],
  properties: { from: DAY, to: DAY },
  description: 'the days counted, first and last inclusive',
} as const;

type ObjectSchema = { type: 'object'; required: string[]; properties: Record<string, object> };

function route(
  summary: string,
  description: string,
  answer: ObjectSchema,
  params = appParams(),
  querystring: object = query(),
) {
  const ok = {
    ...answer,
    required: ['period', ...answer.required],
    properties: { period: PERIOD_ANSWER, ...answer.properties },
  };
  return {
    tags: ['read API'],
    summary,
    description,
    security: [{ readKey: [] }],
    params,
    querystring,
    response: {
      200: ok,
      400: { description: 'a parameter is not valid (the message names it)', ...message },
      401: { description: 'no read key, or not a valid one', ...message },
      403: { description: 'the read key reads another app', ...message },
      429: { description: 'too many requests for this key (see Retry-After)', ...message },
      503: {
        description:
          'the query took longer than its time budget ("This query took longer than N s; try a shorter period or ' +
          'fewer filters."), or too many queries wait already ("Too many queries are waiting; try again in a moment.")',
        ...message,
      },
    },
  };
}

const object = (properties: Record<string, object>): ObjectSchema => ({
  type: 'object',
  required: Object.keys(properties),
  properties,
});
const list = (items: object) => ({ type: 'array', items });

export const READ_API_SCHEMAS = {
  summary: route(
    "The period's totals",
    'Events and sessions of the period (a session counts on the day it started), users active in it, of them those ' +
      "verified (a launch Telegram signed for the app's bot, on the day it signed it), and users new in it (first " +
      'event ever in this app).',
    object({
      events: COUNT,
      users: COUNT,
      verified_users: {
        ...COUNT,
        description: 'users with a launch Telegram signed in the period: what the catalog counts',
      },
      sessions: COUNT,
      new_users: COUNT,
    }),
  ),
  retention: route(
    'Retention cohorts',
    `One cohort per day of the period with new users; retained[k] is how many of them had an event on the cohort's ` +
      `day + k (retained[0] = users), up to "to" or ${RETENTION_DAYS} days. The cells from retained[complete] on fall ` +
      'on today (UTC): still growing, not a final figure.',
    object({
      cohorts: list(
        object({
          day: DAY,
          users: COUNT,
          retained: list(COUNT),
          complete: { ...COUNT, description: "how many of retained's days are over; the cells after them are today's" },
        }),
      ),
    }),
  ),
  funnel: route(
    'A funnel of your own steps',
    'How many users (or sessions) did step 1 in the period (from their first time), then step 2 after it, and so on, ' +
      'every step within the window from step 1. A step is an event name or the name of a custom event ' +
      '(custom_data.name of a custom-event). Each step also has the median seconds from the step before it.',
    object({
      steps: list(
        object({ name: { type: 'string' }, count: COUNT, median_seconds_from_previous: { type: ['number', 'null'] } }),
      ),
    }),
    appParams(),
    {
      ...query({
        steps: {
          ...textParameter(1000),
          description: `2 to ${MAX_FUNNEL_STEPS} steps, comma-separated: an event name, or a custom event's name, optionally as name[property=value] to keep only the custom events with that custom_data value`,
        },
        by: { type: 'string', enum: ['user', 'session'], description: 'count users (default) or sessions' },
        window: { ...textParameter(8), description: 'e.g. 1h, 1d (default) or 7d; at most 90d' },
      }),
      required: ['steps'],
    },
  ),
  customEvents: route(
    'Custom events',
    'Custom event names (custom_data.name of a custom-event, what trackEvent(name, data) sends) with their events ' +
      'and distinct users, most frequent first. "(no name)" holds custom events without a name, "(other)" the ' +
      'names beyond the ones tracked per app. "properties" names the custom_data properties whose values can be ' +
      'read (the values route), in order.',
    object({
      events: list(
        object({
          name: { type: 'string' },
          count: COUNT,
          users: COUNT,
          properties: list({ type: 'string' }),
        }),
      ),
    }),
  ),
  customProperty: route(
    'Values of a custom event property',
    `The ${TOP_PROPERTY_VALUES} most frequent values of one custom_data property of a custom event, then the rest ` +
      'together as "(other)".',
    object({ values: list(object({ value: { type: 'string' }, count: COUNT })) }),
    appParams({ name: textParameter(200), property: textParameter(200) }),
  ),
  campaigns: route(
    'Campaigns (start_param)',
    `The users new in the period by the start_param they first arrived with (up to ${MAX_CAMPAIGNS}, most new users ` +
      'first): how many, how many had an event seven days after their first, and how many completed a wallet ' +
      'connection (both up to "to").',
    object({
      campaigns: list(
        object({ start_param: { type: 'string' }, new_users: COUNT, retained_d7: COUNT, wallet_connections: COUNT }),
      ),
    }),
  ),
  revenue: route(
    'Revenue in Telegram Stars, by source',
    'Stars paid less Stars refunded, per day and for the period, from two sources, each purchase counted once: the ' +
      'bot (successful-payment events in XTR, sent by your bot with a server key: what the bot confirmed) and the Mini ' +
      "App in verified sessions (the official client's purchase-success in a session whose launch Telegram signed, " +
      'priced by the first register-invoice of its slug received in a verified session: a Stars invoice of exactly ' +
      'one price; a later registration never reprices it). A Mini App purchase the bot also reported ' +
      `(a successful-payment of the same user within ${SAME_PURCHASE_WITHIN} of it, whose invoice_payload is the ` +
      "invoice's payload, or whose Stars are the invoice's where either has no payload) counts from the bot alone. " +
      'Refunds (refunded-payment) come from the bot and count on the day they were made. Also: paying users (distinct ' +
      'users with a successful-payment or a purchase-success in a verified session) and the conversion (of the ' +
      'invoices opened in verified sessions, the share paid in the same session: at most 1). What pages reported in ' +
      'sessions Telegram did not sign is in "unverified", never added to the figures.',
    object({
      currency: { type: 'string', enum: ['XTR'] },
      stars: { type: 'number', description: 'net Stars: stars_paid - stars_refunded' },
      stars_paid: { ...COUNT, description: 'stars_from_bot + stars_from_mini_app' },
      stars_refunded: { ...COUNT, description: "source: the bot's refunded-payment events in XTR" },
      stars_from_bot: { ...COUNT, description: "source: the bot's successful-payment events in XTR" },
      stars_from_mini_app: {
        ...COUNT,
        description:
          "source: the Mini App's purchase-success events in verified sessions, at their register-invoice's XTR price",
      },
      payments: { ...COUNT, description: 'payments_from_bot + payments_from_mini_app' },
      payments_from_bot: { ...COUNT, description: 'successful-payment events in XTR' },
      payments_from_mini_app: { ...COUNT, description: 'purchase-success events counted in stars_from_mini_app' },
      refunds: { ...COUNT, description: 'refunded-payment events in XTR (from the bot)' },
      paying_users: COUNT,
      purchase_init: COUNT,
      purchase_success: COUNT,
      purchase_success_unpriced: {
        ...COUNT,
        description: 'purchase-success events whose slug has no register-invoice in XTR: purchases, never Stars',
      },
      conversion: {
        type: ['number', 'null'],
        description: 'of the invoices opened in verified sessions (purchase-init), the share paid (purchase-success)',
      },
      unverified: object({
        stars: {
          ...COUNT,
          description: 'reported by pages in sessions Telegram did not sign: not verified, not added',
        },
        payments: COUNT,
        purchase_success: COUNT,
        paying_users: COUNT,
      }),
      days: list(
        object({
          day: DAY,
          stars: { type: 'number', description: "the day's Stars paid (both sources) less refunded" },
          stars_from_bot: COUNT,
          stars_from_mini_app: COUNT,
          payments: COUNT,
          refunds: COUNT,
          paying_users: COUNT,
          complete: { type: 'boolean', description: 'false for today (UTC): still growing' },
        }),
      ),
    }),
  ),
};

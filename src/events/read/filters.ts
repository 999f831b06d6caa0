// The filter every card of the dashboard and every read API answer takes: platform, language, premium, campaign, and
// verified traffic (sessions whose launch Telegram signed). Cards counting events keep the events launched with those
// attributes (in a verified session, or not); cards counting users by their first day (retention cohorts, campaigns,
// new users) keep the users first seen with them (with a verified launch, or without any). A campaign means one thing
// on every card: the users who first arrived with that start_param, with all they did.
import { param } from '../../db/named-sql.ts';
import { ROLLUP_TEXT_LENGTH, rollupText } from '../custom-events.ts';

export interface Filter {
  platform?: string;
  /** the launch's language (the event's locale) */
  language?: string;
  premium?: boolean;
  /** the launch's start_param */
  campaign?: string;
  /** true: only traffic Telegram signed (verified sessions, verified users); false: only the rest */
  verified?: boolean;
}

export const NO_FILTER: Filter = {};

export const FILTER_KEYS = ['platform', 'language', 'premium', 'campaign', 'verified'] as const;

/** the keys whose value is true or false */
const BOOLEAN_KEYS: ReadonlySet<string> = new Set(['premium', 'verified']);

export function isFiltered(filter: Filter): boolean {
  return FILTER_KEYS.some((key) => filter[key] !== undefined);
}

/** the columns a filter compares, as the rollups keep them ('' when absent, cut to the rollups' length) */
interface FilterColumns {
  platform: string;
  language: string;
  premium: string;
  campaign: string;
  verified: string;
}

/** how a card applies one key of the filter: a column equal to the value, or a condition on the value's parameter */
type FilterTest = string | ((value: string) => string);

type FilterTests = Record<(typeof FILTER_KEYS)[number], FilterTest>;

/** the launch attributes of events (alias: the events table's, or its name) */
export function eventColumns(alias = 'events'): FilterColumns {
  const at = `${alias}.`;
  return {
    platform: rollupText(`${at}platform`),
    language: rollupText(`${at}locale`),
    premium: `${at}is_premium`,
    campaign: rollupText(`${at}start_param`),
    // the page's events of a session whose launch Telegram signed (a server key's are its sender's word)
    verified: `(${at}sent_by_server IS NOT TRUE AND EXISTS (SELECT 1 FROM verified_sessions v WHERE v.app_id = ${at}app_id AND v.session_id = ${at}session_id))`,
  };
}

/**
 * The filter over events (alias: the events table's, or its name, in a statement whose app is the parameter app): the
 * launch's platform, language and Premium, the session's verification, and the campaign the user first arrived with
 */
export function eventFilter(alias = 'events'): FilterTests {
  const firstCampaign = rollupText('u.campaign');
  return {
    ...eventColumns(alias),
    // the app's users read once (hashed), not per event
    campaign: (value) =>
      `${alias}.user_key IN (SELECT u.user_key FROM app_users u WHERE u.app_id = {{app}} AND ${firstCampaign} = ${value})`,
  };
}

/** the attributes a user was first seen with (alias: app_users', in a statement whose app is the parameter app) */
export function firstSeenColumns(alias: string): FilterColumns {
  return {
    platform: rollupText(`${alias}.platform`),
    language: rollupText(`${alias}.locale`),
    premium: `coalesce(${alias}.is_premium, false)`,
    campaign: rollupText(`${alias}.campaign`),
    // a user with a launch Telegram signed: the app's verified users read once (the statement's app), not per user
    verified: `(${alias}.user_key IN (SELECT v.user_key FROM verified_sessions v WHERE v.app_id = {{app}}))`,
  };
}

/** the filter's named parameter for one of its keys */
const filterParam = (key: (typeof FILTER_KEYS)[number]) => `filter_${key}`;

/**
 * The filter as SQL conditions (each starting with AND; '' without a filter) over named parameters, whose values
 * filterValues() gives
 */
export function filterConditions(filter: Filter, tests: FilterTests): string {
  let sql = '';
  for (const key of FILTER_KEYS) {
    if (filter[key] === undefined) continue;
    const value = `${param(filterParam(key))}${BOOLEAN_KEYS.has(key) ? '::bool' : ''}`;
    const test = tests[key];
    sql += ` AND ${typeof test === 'string' ? `${test} = ${value}` : test(value)}`;
  }
  return sql;
}

/** the values of filterConditions()' parameters */
export function filterValues(filter: Filter): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  for (const key of FILTER_KEYS) {
    const value = filter[key];
    if (value !== undefined)
      values[filterParam(key)] = typeof value === 'string' ? value.slice(0, ROLLUP_TEXT_LENGTH) : value;
  }
  return values;
}

export type FilterQuery = Partial<Record<(typeof FILTER_KEYS)[number], string>>;

/**
 * platform, language, campaign (text), premium and verified (true or false) from a query; absent or empty: not
 * filtered on
 */
export function parseFilter(query: FilterQuery): { ok: true; value: Filter } | { ok: false; error: string } {
  const filter: Filter = {};
  for (const key of FILTER_KEYS) {
    const value = query[key];
    if (value === undefined || value === '') continue;
    if (key === 'premium' || key === 'verified') {
      if (value !== 'true' && value !== 'false')
        return { ok: false, error: `The query parameter "${key}" must be "true" or "false".` };
      filter[key] = value === 'true';
    } else filter[key] = value;
  }
  return { ok: true, value: filter };
}

// The read API's query parameters: a period of UTC days (default the last 30), the filter, and a funnel's steps,
// grouping and window, each refused with a message that names what is wrong.
import { addDays, DAY_MS } from '../events/days.ts';
import { FILTER_KEYS, type Filter } from '../events/filters.ts';
import type { FunnelQuery } from '../events/insights.ts';
import { lastDays, type Period } from '../events/rollups.ts';

/** the longest period one request reads */
export const MAX_PERIOD_DAYS = 366;
const DEFAULT_PERIOD_DAYS = 30;
const DEFAULT_WINDOW = '1d';
const WINDOW_UNITS_MS = { m: 60_000, h: 3_600_000, d: DAY_MS } as const;
const MAX_WINDOW_MS = 90 * DAY_MS;

export class ReadApiError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
  ) {
    super(message);
  }
}

function day(text: string, name: string): string {
  const parsed = Date.parse(`${text}T00:00:00Z`);
  if (Number.isNaN(parsed) || new Date(parsed).toISOString().slice(0, 10) !== text)
    throw new ReadApiError(400, `The query parameter "${name}" must be a day as YYYY-MM-DD (UTC).`);
  return text;
}

/** from and to, inclusive; either may be left out (to: today; from: 29 days before to) */
export function parsePeriod(query: { from?: string; to?: string }, now = new Date()): Period {
  const to = query.to === undefined ? lastDays(1, now).to : day(query.to, 'to');
  const from = query.from === undefined ? addDays(to, -(DEFAULT_PERIOD_DAYS - 1)) : day(query.from, 'from');
  if (from > to) throw new ReadApiError(400, `The period is empty: "from" (${from}) is after "to" (${to}).`);
  if ((Date.parse(to) - Date.parse(from)) / DAY_MS + 1 > MAX_PERIOD_DAYS)
    throw new ReadApiError(400, `The period is longer than ${MAX_PERIOD_DAYS} days.`);
  return { from, to };
}

/** steps=<name>,<name>,…; by=user|session (default user); window=<n>m|h|d (default 1d, at most 90 days) */
export function parseFunnelQuery(
  query: { steps?: string; by?: string; window?: string },
  maxSteps: number,
): FunnelQuery {
  const steps = (query.steps ?? '').split(',').map((step) => step.trim());
  if (steps.length < 2 || steps.length > maxSteps || steps.some((step) => step === ''))
    throw new ReadApiError(
      400,
      `The query parameter "steps" must name 2 to ${maxSteps} event names, separated by commas (custom events by their name).`,
    );
  const by = query.by ?? 'user';
  if (by !== 'user' && by !== 'session')
    throw new ReadApiError(400, 'The query parameter "by" must be "user" or "session".');
  const window = /^(\d{1,4})([mhd])$/.exec(query.window ?? DEFAULT_WINDOW);
  const windowMs = window ? Number(window[1]) * WINDOW_UNITS_MS[window[2] as keyof typeof WINDOW_UNITS_MS] : 0;
  if (windowMs <= 0 || windowMs > MAX_WINDOW_MS)
    throw new ReadApiError(
      400,
      'The query parameter "window" must be a duration such as 30m, 1h, 1d or 7d, of at most 90 days.',
    );
  return { steps, by, windowMs };
}

/** platform, language, campaign (text) and premium (true or false); absent or empty: not filtered on */
export function parseFilter(query: Partial<Record<(typeof FILTER_KEYS)[number], string>>): Filter {
  const filter: Filter = {};
  for (const key of FILTER_KEYS) {
    const value = query[key];
    if (value === undefined || value === '') continue;
    if (key !== 'premium') filter[key] = value;
    else if (value === 'true' || value === 'false') filter.premium = value === 'true';
    else throw new ReadApiError(400, 'The query parameter "premium" must be "true" or "false".');
  }
  return filter;
}

// The read API's query parameters: a period of UTC days (default the last 30), the filter, and a funnel's steps,
// grouping and window, each refused with a message that names what is wrong.
import { addDays, DAY_MS } from '../events/days.ts';
import { type Filter, type FilterQuery, parseFilter } from '../events/read/filters.ts';
import { parseFunnelQuery } from '../events/read/funnel-parameters.ts';
import type { FunnelQuery } from '../events/read/insights.ts';
import { lastDays, type Period } from '../events/read/dashboard.ts';
import { refused } from '../platform/http-error.ts';

/** the longest period one request reads */
export const MAX_PERIOD_DAYS = 366;
const DEFAULT_PERIOD_DAYS = 30;

function day(text: string, name: string): string {
  const parsed = Date.parse(`${text}T00:00:00Z`);
  // year 0 is a day to JavaScript, not to PostgreSQL's calendar
  if (Number.isNaN(parsed) || new Date(parsed).toISOString().slice(0, 10) !== text || text.startsWith('0000'))
    throw refused(400, `The query parameter "${name}" must be a day as YYYY-MM-DD (UTC).`);
  return text;
}

/** from and to, inclusive; either may be left out (to: today; from: 29 days before to) */
export function parsePeriod(query: { from?: string; to?: string }, now = new Date()): Period {
  const to = query.to === undefined ? lastDays(1, now).to : day(query.to, 'to');
  const from = query.from === undefined ? addDays(to, -(DEFAULT_PERIOD_DAYS - 1)) : day(query.from, 'from');
  if (from > to) throw refused(400, `The period is empty: "from" (${from}) is after "to" (${to}).`);
  if ((Date.parse(to) - Date.parse(from)) / DAY_MS + 1 > MAX_PERIOD_DAYS)
    throw refused(400, `The period is longer than ${MAX_PERIOD_DAYS} days.`);
  return { from, to };
}

/** a funnel's steps, grouping and window (see events/read/funnel-parameters.ts) */
export function funnelOf(query: { steps?: string; by?: string; window?: string }, maxSteps: number): FunnelQuery {
  const parsed = parseFunnelQuery(query, maxSteps);
  if (!parsed.ok) throw refused(400, parsed.error);
  return parsed.value;
}

/** the filter of a request (see events/read/filters.ts) */
export function filterOf(query: FilterQuery): Filter {
  const parsed = parseFilter(query);
  if (!parsed.ok) throw refused(400, parsed.error);
  return parsed.value;
}

// A funnel as a request asks for it: steps=<name>,<name>,…; by=user|session (default user); window=<n>m|h|d
// (default 1d, at most 90 days). Read by the read API and the site, refused with a message naming the parameter.
import { DAY_MS } from '../days.ts';
import type { FunnelQuery } from './funnel-reader.ts';

/** the window of a funnel that names none */
export const DEFAULT_WINDOW = '1d';
const WINDOW_UNITS_MS = { m: 60_000, h: 3_600_000, d: DAY_MS } as const;
const MAX_WINDOW_MS = 90 * DAY_MS;

export function parseFunnelQuery(
  query: { steps?: string; by?: string; window?: string },
  maxSteps: number,
  /** how the answer names what it checks: the query parameters of a read, or the fields of a saved funnel */
  place = 'query parameter',
): { ok: true; value: FunnelQuery } | { ok: false; error: string; parameter: 'steps' | 'by' | 'window' } {
  const refused = (parameter: 'steps' | 'by' | 'window', problem: string) =>
    ({ ok: false, error: `The ${place} "${parameter}" ${problem}.`, parameter }) as const;
  const steps = (query.steps ?? '').split(',').map((step) => step.trim());
  if (steps.length < 2 || steps.length > maxSteps || steps.some((step) => step === ''))
    return refused(
      'steps',
      `must name 2 to ${maxSteps} event names, separated by commas (custom events by their name)`,
    );
  if (steps.some((step) => step.includes('\u0000'))) return refused('steps', 'must not contain a NUL character');
  const by = query.by ?? 'user';
  if (by !== 'user' && by !== 'session') return refused('by', 'must be "user" or "session"');
  const window = /^(\d{1,4})([mhd])$/.exec(query.window ?? DEFAULT_WINDOW);
  const windowMs = window ? Number(window[1]) * WINDOW_UNITS_MS[window[2] as keyof typeof WINDOW_UNITS_MS] : 0;
  if (windowMs <= 0 || windowMs > MAX_WINDOW_MS)
    return refused('window', 'must be a duration such as 30m, 1h, 1d or 7d, of at most 90 days');
  return { ok: true, value: { steps, by, windowMs } };
}

// UTC days: the unit of every rollup, quota and window. A day is YYYY-MM-DD, or its number since the epoch.

export const DAY_MS = 86_400_000;

/** a span of UTC days: the first and the last, inclusive, as YYYY-MM-DD */
export interface Period {
  from: string;
  to: string;
}

/** the number of the UTC day a time falls on */
export function dayNumberOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** YYYY-MM-DD of a day number */
export function isoDayOfNumber(dayNumber: number): string {
  return new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
}

/** YYYY-MM-DD of the UTC day a time falls on */
export function isoDayOf(ms: number): string {
  return isoDayOfNumber(dayNumberOf(ms));
}

/** the UTC day `days` days after (or, negative, before) a YYYY-MM-DD day */
export function addDays(day: string, days: number): string {
  return new Date(Date.parse(day) + days * DAY_MS).toISOString().slice(0, 10);
}

/** every UTC day from `from` to `to`, both included */
export function eachDay(from: string, to: string): string[] {
  const days: string[] = [];
  for (let time = Date.parse(from); time <= Date.parse(to); time += DAY_MS)
    days.push(new Date(time).toISOString().slice(0, 10));
  return days;
}

/**
 * Whether a UTC day is over at `now`: today's numbers still grow, so they are marked as incomplete and left out of
 * comparisons
 */
export function isCompleteDay(day: string, now: number = Date.now()): boolean {
  return day < isoDayOf(now);
}

/** how many days from `day` on (day included) are over at `now` (0 when `day` is today or later) */
export function completeDaysFrom(day: string, now: number = Date.now()): number {
  return Math.max(0, Math.round((Date.parse(isoDayOf(now)) - Date.parse(day)) / DAY_MS));
}

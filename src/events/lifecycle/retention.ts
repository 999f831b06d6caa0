// An app's retention period: the choices an owner has, how a choice is read and told, and the first day it keeps.
import type { Parsed } from '../../platform/parsed.ts';
import { addDays, isoDayOf } from '../days.ts';

/**
 * Days an owner may keep; null (forever, the default) keeps everything until the app is deleted. The shortest is
 * 30 days, so the catalog ranking's 30-day window and the dashboards' 30-day view always have their data.
 */
export const RETENTION_CHOICES = [30, 90, 180, 365] as const;

/** days kept, or null for forever */
export type RetentionDays = number | null;

const RULE = `Retention must be ${RETENTION_CHOICES.join(', ')} days or "forever".`;

/** a retention as given: null or "forever", or one of the choices as a number or its digits */
export function parseRetention(input: unknown): Parsed<RetentionDays> {
  if (input === null || (typeof input === 'string' && input.trim().toLowerCase() === 'forever'))
    return { ok: true, value: null };
  const days = typeof input === 'string' && /^\s*\d{1,4}\s*$/.test(input) ? Number(input) : input;
  if (typeof days === 'number' && (RETENTION_CHOICES as readonly number[]).includes(days))
    return { ok: true, value: days };
  return { ok: false, error: RULE };
}

/** "forever", "90 days", "1 year" */
export function retentionText(days: RetentionDays): string {
  if (days === null) return 'forever';
  return days === 365 ? '1 year' : `${days} days`;
}

/**
 * The first UTC day a retention of `days` keeps: the last `days` days, today included (the days a dashboard's
 * "last N days" shows). Everything counted on an earlier day is past the period.
 */
export function firstKeptDay(days: number, now: Date = new Date()): string {
  return addDays(isoDayOf(now.getTime()), -(days - 1));
}

/** whether changing from `current` to `next` keeps less than before (so it deletes something) */
export function shortens(current: RetentionDays, next: RetentionDays): boolean {
  return next !== null && (current === null || next < current);
}

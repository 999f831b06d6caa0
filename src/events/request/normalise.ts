// Turns a validated event into the stored shape: typed columns, parsed times, one auth_type form,
// a referer without query or fragment, and text PostgreSQL can store (no NUL, no lone surrogates).
import type { RawEvent } from './validate.ts';
import { dayNumberOf, isoDayOfNumber } from '../days.ts';

export interface NormalisedEvent {
  eventName: string;
  sessionId: string;
  /** the user id in decimal digits, whether it was sent as a number or a string: one user either way */
  userId: string;
  isPremium: boolean;
  isSuccess: boolean;
  platform: string | null;
  locale: string | null;
  startParam: string | null;
  occurredAt: Date;
  /** the client's time as sent (epoch ms), null when absent or unreadable; occurredAt may differ from it */
  sentAt: number | null;
  /** UTC day the event is counted on (from occurredAt) */
  day: string;
  /** every other field, nested values kept as sent */
  props: Record<string, unknown>;
}

/** client clocks are wrong sometimes: trust them within this window around the receive time */
const MAX_CLIENT_PAST_MS = 90 * 24 * 3600 * 1000;
const MAX_CLIENT_FUTURE_MS = 10 * 60 * 1000;

const COLUMN_FIELDS = new Set([
  'user_id',
  'app_name',
  'event_name',
  'session_id',
  'is_premium',
  'is_success',
  'platform',
  'locale',
  'start_param',
  'client_timestamp',
]);

/** the latest and earliest times a Date holds (±100,000,000 days around 1970) */
const MAX_DATE_MS = 8.64e15;

/**
 * Epoch ms from "1795303097503" (ms), "1795303097" (s) or an ISO date; null when unreadable or out of a Date's
 * range (e.g. "9007199254740991"), so whatever is read can be written back as a date.
 */
export function parseClientTime(value: string): number | null {
  if (/^\d{1,16}$/.test(value)) {
    const number = Number(value);
    const ms = number < 1e11 ? number * 1000 : number;
    return ms <= MAX_DATE_MS ? ms : null;
  }
  const parsed = Date.parse(value);
  return Number.isNaN(parsed) ? null : parsed;
}

function authTypeNumber(value: unknown): 0 | 1 | null {
  if (value === 0 || value === 'wallet_addr' || value === 'ton_addr') return 0;
  if (value === 1 || value === 'wallet_proof' || value === 'ton_proof') return 1;
  return null;
}

function withoutQuery(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.origin + parsed.pathname;
  } catch {
    return url.split(/[?#]/)[0]!;
  }
}

/**
 * Tested on JSON.stringify output, where NUL is always written as the escape \u0000 and a lone surrogate as
 * an escape \udXXX (paired surrogates stay raw characters), so the raw characters never show up there.
 * (An escaped backslash followed by "u0000" also matches: harmless, storable() leaves such text as it is.)
 */
const UNSTORABLE = /\\u0000|\\ud[89a-f]/;

function storable(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\ufffd').toWellFormed();
  if (Array.isArray(value)) return value.map(storable);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, child]) => [storable(key) as string, storable(child)]));
  }
  return value;
}

function optionalText(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

let lastDayNumber = Number.NaN;
let lastDay = '';

/** YYYY-MM-DD of a UTC time; the same few days come up again and again, so the last one is kept */
function utcDay(ms: number): string {
  const dayNumber = dayNumberOf(ms);
  if (dayNumber !== lastDayNumber) {
    lastDay = isoDayOfNumber(dayNumber);
    lastDayNumber = dayNumber;
  }
  return lastDay;
}

/** serialised is JSON.stringify(raw), computed once by the caller for the event key */
export function normaliseEvent(raw: RawEvent, serialised: string, receivedAt: Date): NormalisedEvent {
  const event = (UNSTORABLE.test(serialised) ? storable(raw) : raw) as RawEvent;
  const received = receivedAt.getTime();
  const props: Record<string, unknown> = {};
  for (const key of Object.keys(event)) {
    const value = event[key];
    if (value !== null && value !== undefined && !COLUMN_FIELDS.has(key)) props[key] = value;
  }
  if (props.auth_type !== undefined) props.auth_type = authTypeNumber(props.auth_type);
  if (typeof props.url_referer === 'string') props.url_referer = withoutQuery(props.url_referer);
  if (typeof props.valid_until === 'string') {
    // kept as sent when it cannot be read as a time
    const until = parseClientTime(props.valid_until);
    if (until !== null) props.valid_until = new Date(until).toISOString();
  }

  let occurred = received;
  const sentAt = typeof event.client_timestamp === 'string' ? parseClientTime(event.client_timestamp) : null;
  if (typeof event.client_timestamp === 'string') {
    if (sentAt !== null && sentAt >= received - MAX_CLIENT_PAST_MS && sentAt <= received + MAX_CLIENT_FUTURE_MS) {
      occurred = sentAt;
    } else {
      props.client_timestamp = event.client_timestamp; // kept as sent when we could not use it
    }
  }
  const occurredAt = new Date(occurred);
  return {
    eventName: event.event_name as string,
    sessionId: (event.session_id as string).toLowerCase(),
    userId: String(event.user_id), // validation lets through safe integers only, which String writes without exponent
    isPremium: event.is_premium === true,
    isSuccess: event.is_success === true,
    platform: optionalText(event.platform),
    locale: optionalText(event.locale),
    startParam: optionalText(event.start_param),
    occurredAt,
    sentAt,
    day: utcDay(occurred),
    props,
  };
}

// Builds events like the official client sends, and posts them like a browser would; and rows as the event plane
// takes them, for tests that store events directly.
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import type { EventRow } from '../../src/events/write/event-plane.ts';

/** a stored app-init of a new user and session, received now (or at overrides.receivedAt) and occurred then */
export function eventRow(appId: number, overrides: Partial<EventRow> = {}): EventRow {
  const receivedAt = overrides.receivedAt ?? new Date();
  const occurredAt = overrides.occurredAt ?? receivedAt;
  return {
    appId,
    eventKey: crypto.randomBytes(16),
    receivedAt,
    occurredAt,
    day: occurredAt.toISOString().slice(0, 10),
    eventName: 'app-init',
    sessionId: crypto.randomUUID(),
    userKey: crypto.randomBytes(16),
    isPremium: false,
    isSuccess: false,
    platform: 'ios',
    locale: 'en',
    startParam: null,
    props: {},
    ...overrides,
  };
}

/** the day of numberedRow's events */
export const NUMBERED_DAY = '2026-11-20';

/**
 * Custom event number `seq` of app `appId` at noon of NUMBERED_DAY, the same for every call: its key from `seq`, its
 * user one of seven (`seq` modulo 7), `{ seq }` as its custom data
 */
export function numberedRow(appId: number, seq: number, overrides: Partial<EventRow> = {}): EventRow {
  const receivedAt = new Date(`${NUMBERED_DAY}T12:00:00Z`);
  return eventRow(appId, {
    eventKey: crypto.createHash('sha256').update(`event ${seq}`).digest().subarray(0, 16),
    userKey: crypto
      .createHash('sha256')
      .update(`user ${seq % 7}`)
      .digest()
      .subarray(0, 16),
    receivedAt,
    occurredAt: receivedAt,
    day: NUMBERED_DAY,
    eventName: 'custom-event',
    platform: 'android',
    props: { custom_data: { seq } },
    bytes: 100,
    ...overrides,
  });
}

export function makeEvent(appName: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    event_name: 'app-init',
    session_id: crypto.randomUUID(),
    user_id: 279058397,
    app_name: appName,
    is_premium: true,
    platform: 'tdesktop',
    locale: 'en',
    start_param: '',
    client_timestamp: String(Date.now()),
    ...overrides,
  };
}

export interface PostOptions {
  token?: string;
  header?: 'ANALYTICS-Auth-Token' | 'TGA-Auth-Token';
  origin?: string | null;
  gzip?: boolean;
  headers?: Record<string, string>;
}

/** a response body as JSON, or undefined when it is not JSON */
export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export async function postEvents(baseUrl: string, body: unknown, options: PostOptions = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.token !== undefined) headers[options.header ?? 'ANALYTICS-Auth-Token'] = options.token;
  const origin = options.origin === undefined ? 'https://app.example.com' : options.origin;
  if (origin !== null) headers.origin = origin;
  let payload: string | Uint8Array<ArrayBuffer> = typeof body === 'string' ? body : JSON.stringify(body);
  if (options.gzip) {
    payload = new Uint8Array(zlib.gzipSync(payload));
    headers['content-encoding'] = 'gzip';
  }
  const response = await fetch(`${baseUrl}/events`, { method: 'POST', headers, body: payload });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: parseJsonOrUndefined(text) as Record<string, unknown>,
  };
}

// Request bodies for the ingest bench: every event unique (so no request is a cheap duplicate that the
// store skips), shaped like the official client's traffic. Written to a file of length-prefixed bodies
// (4-byte big-endian length, then the bytes) that both load generators read.
import crypto from 'node:crypto';
import fs from 'node:fs';
import zlib from 'node:zlib';

/** a deterministic 8-4-4-4-12 hex id from a counter and a run tag (fast; no randomness needed) */
function uuidFrom(tag: string, n: number): string {
  const hex = crypto.createHash('md5').update(`${tag}:${n}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

const PLATFORMS = ['tdesktop', 'android', 'ios', 'weba', 'macos'];
const LOCALES = ['en', 'ru', 'es', 'de', 'pt-br', 'uk'];
const USERS = 100_000;

export interface BodyOptions {
  appName: string;
  /** distinguishes bodies of different phases (a phase never repeats another's events) */
  tag: string;
  count: number;
}

/** one plain-JSON event per body, like a simple integration posting each event as it happens */
export function singleEventBodies(options: BodyOptions): Buffer[] {
  const now = Date.now();
  const bodies: Buffer[] = [];
  for (let n = 0; n < options.count; n++) {
    bodies.push(
      Buffer.from(
        JSON.stringify({
          event_name: 'custom-event',
          session_id: uuidFrom(options.tag, n >> 3),
          user_id: 100_000_000 + ((n * 7919) % USERS),
          app_name: options.appName,
          is_premium: n % 5 === 0,
          platform: PLATFORMS[n % PLATFORMS.length],
          locale: LOCALES[n % LOCALES.length],
          start_param: '',
          client_timestamp: String(now - (n % 60_000)),
          custom_data: { button: 'buy', screen: 'catalog', seq: n, run: options.tag },
        }),
      ),
    );
  }
  return bodies;
}

/**
 * 20 events per body, gzip-compressed: what the official client sends (one session's app-init, custom
 * events, a TON Connect connection and app-hide), each event unique through its seq and client time.
 */
export function officialBatchBodies(options: BodyOptions & { eventsPerBatch?: number }): Buffer[] {
  const perBatch = options.eventsPerBatch ?? 20;
  const now = Date.now();
  const bodies: Buffer[] = [];
  let seq = 0;
  for (let n = 0; n < options.count; n++) {
    const session = uuidFrom(options.tag, n);
    const userId = 100_000_000 + ((n * 7919) % USERS);
    const base = {
      session_id: session,
      user_id: userId,
      app_name: options.appName,
      is_premium: n % 5 === 0,
      platform: PLATFORMS[n % PLATFORMS.length],
      locale: LOCALES[n % LOCALES.length],
      start_param: n % 4 === 0 ? 'promo' : '',
    };
    const events: Record<string, unknown>[] = [];
    for (let i = 0; i < perBatch; i++) {
      const at = String(now - 60_000 + i * 1_000 + (n % 1000));
      let event: Record<string, unknown>;
      if (i === 0) event = { event_name: 'app-init', ...base, client_timestamp: at };
      else if (i === perBatch - 1) event = { event_name: 'app-hide', ...base, client_timestamp: at };
      else if (i === 5) {
        event = {
          event_name: 'connection-started',
          ...base,
          client_timestamp: at,
          custom_data: { ton_connect_sdk_lib: '3.4.1', ton_connect_ui_lib: '2.3.1', trace_id: uuidFrom('trace', seq) },
        };
      } else
        event = {
          event_name: 'custom-event',
          ...base,
          client_timestamp: at,
          custom_data: { button: 'tap', screen: `s${i}`, seq },
        };
      seq++;
      events.push(event);
    }
    bodies.push(zlib.gzipSync(JSON.stringify(events)));
  }
  return bodies;
}

export function writeBodyFile(file: string, bodies: Buffer[]): { file: string; count: number; bytes: number } {
  const header = Buffer.alloc(4);
  const fd = fs.openSync(file, 'w');
  let bytes = 0;
  try {
    for (const body of bodies) {
      header.writeUInt32BE(body.length, 0);
      fs.writeSync(fd, header);
      fs.writeSync(fd, body);
      bytes += body.length;
    }
  } finally {
    fs.closeSync(fd);
  }
  return { file, count: bodies.length, bytes };
}

export function readBodyFile(file: string): Buffer[] {
  const data = fs.readFileSync(file);
  const bodies: Buffer[] = [];
  for (let pos = 0; pos < data.length; ) {
    const length = data.readUInt32BE(pos);
    bodies.push(data.subarray(pos + 4, pos + 4 + length));
    pos += 4 + length;
  }
  return bodies;
}

export interface InsightsMix {
  /** every n-th event of a session (but its first and last) is a custom event */
  customEvery: number;
  /** distinct values of the custom events' `sku` property */
  skus: number;
}

/**
 * 20 events per body, gzip-compressed, in the official client's shape, with custom events as trackEvent(name, data)
 * sends them (12 names, a `screen` and a `sku` property) and a TON Connect connection in every tenth session: what
 * the insights' aggregates are kept from. Users come back across sessions; every event is unique.
 */
export function insightsMixBodies(options: BodyOptions & InsightsMix): Buffer[] {
  const now = Date.now();
  const bodies: Buffer[] = [];
  for (let n = 0; n < options.count; n++) {
    const user = (n * 7919) % 20_000;
    const base = {
      session_id: uuidFrom(options.tag, n),
      user_id: 100_000_000 + user,
      app_name: options.appName,
      is_premium: user % 5 === 0,
      platform: PLATFORMS[user % PLATFORMS.length],
      locale: LOCALES[user % LOCALES.length],
      start_param: user % 7 === 0 ? `promo${user % 3}` : '',
    };
    const events: Record<string, unknown>[] = [];
    for (let i = 0; i < 20; i++) {
      const event: Record<string, unknown> = {
        ...base,
        client_timestamp: String(now - 60_000 + i * 1_000 + (n % 1000)),
      };
      if (i === 0) event.event_name = 'app-init';
      else if (n % 10 === 0 && i === 1) {
        event.event_name = 'connection-started';
        event.custom_data = { ton_connect_sdk_lib: '3.4.1', ton_connect_ui_lib: '2.3.1' };
      } else if (n % 10 === 0 && i === 2) {
        Object.assign(event, { event_name: 'connection-completed', is_success: true, wallet_type: 'tonkeeper' });
        event.wallet_address = `0:${uuidFrom('wallet', user).replaceAll('-', '').padEnd(64, '0')}`;
      } else if (i < 19 && i % options.customEvery === 0) {
        event.event_name = 'custom-event';
        event.custom_data = {
          name: `action_${(n + i) % 12}`,
          screen: `s${i}`,
          sku: `sku_${(n * 7 + i) % options.skus}`,
        };
      } else event.event_name = 'app-hide';
      events.push(event);
    }
    bodies.push(zlib.gzipSync(JSON.stringify(events)));
  }
  return bodies;
}

// Property-based: events built from the edges of the event schema (boundary lengths, extreme numbers, odd
// unicode, odd date strings, null, missing) sent through the real service to a real store are either refused
// by validation, naming what failed, or stored as sent; none is ever answered "Failed to record".
import crypto from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_NAMES } from '../../../src/events/request/names.ts';
import { eventSchema } from '../../../src/events/request/schema.ts';
import { postEvents } from '../../helpers/events.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND } from '../../helpers/stores.ts';

/** enough to reach every field's edges on each run of the suite while it stays within a few seconds */
const RUNS = 100;
/** a slow machine runs fewer events rather than failing on the test's timeout (a failure found is still reported) */
const TIME_LIMIT_MS = 40_000;
const APP = 'edges_app';

/** a number as JSON text (JSON.stringify cannot write 1e400, which JSON.parse reads as Infinity) */
class NumberText {
  constructor(readonly text: string) {}
}

/** a session id filled in at sending time, so every generated event is a new one and can be found again */
class SessionId {
  constructor(readonly shape: 'lower' | 'upper' | 'invalid') {}
}

const ABSENT = Symbol('absent');

// ---- building blocks ----

const ODD_UNITS = [
  '\u0000',
  '\ud800',
  '\udfff',
  '\udbff\udfff',
  '\ud83d\ude80',
  '\u2028',
  '\ufeff',
  '\uffff',
  '\u0301',
  '\u001f',
  '\u007f',
  '\\',
  '"',
  '%00',
  ' ',
  '\u00e9',
  '\u202e',
  'a',
];
const unit = fc.oneof(fc.constantFrom(...ODD_UNITS), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }));
const shortText = fc.string({ unit, maxLength: 12 });

/** text around a maxLength: empty, just under and at it (and over it when invalid), of one maybe astral or broken unit */
function boundaryText(maxLength: number, invalid: boolean) {
  const lengths = invalid ? [maxLength + 1, maxLength + 2] : [0, 1, maxLength - 1, maxLength];
  return fc.oneof(
    shortText,
    fc.tuple(fc.constantFrom(...lengths), unit).map(([length, char]) => char.repeat(length)),
  );
}

const NUMBER_EDGES = [
  '0',
  '-0',
  '0.0',
  '1.0',
  '1',
  '-1',
  '0.1',
  '1E+2',
  '-1.5e-7',
  '1e308',
  '-1e308',
  '1.7976931348623157e308',
  '5e-324',
  '-5e-324',
  '1e400',
  '-1e400',
  '1e-400',
  '123456789012345678901234567890',
  '9007199254740991',
  '9007199254740992',
  '9007199254740993',
  '-9007199254740993',
  '1' + '0'.repeat(400),
  '0.' + '0'.repeat(400) + '1',
];
const numberText = fc
  .oneof(
    fc.constantFrom(...NUMBER_EDGES),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
    fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  )
  .map((text) => new NumberText(text));

const key = fc.oneof(
  shortText,
  fc.constantFrom('', 'constructor', 'prototype', 'toString', 'user_id', 'a'.repeat(300)),
);

const jsonValue = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', maxDepth: 5 },
    shortText,
    numberText,
    fc.boolean(),
    fc.constant(null),
    fc.dictionary(key, tie('value'), { maxKeys: 3 }),
    fc.array(tie('value'), { maxLength: 3 }),
  ),
})).value;

/** custom_data nested up to the service's depth limit (16 levels below the event), or beyond it when invalid */
function deepCustomData(invalid: boolean) {
  return fc.integer(invalid ? { min: 16, max: 18 } : { min: 12, max: 15 }).map((depth) => {
    let value: unknown = 'bottom';
    for (let level = 0; level < depth; level++) value = level % 2 ? [value] : { inner: value };
    return { inner: value };
  });
}

const NOW = Date.now();
const DAY = 86_400_000;
const DATE_EDGES = [
  '9007199254740991',
  '99999999999999999999',
  '8640000000000000',
  '8640000000000001',
  '0',
  '1',
  '1795303097',
  '1e3',
  '-1',
  ' 1 ',
  '+275760-09-13T00:00:00.000Z',
  '+275760-09-13T00:00:00.001Z',
  '-271821-04-20T00:00:00.000Z',
  '-271821-04-19T23:59:59.999Z',
  '0000-01-01T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '+010000-01-01T00:00:00Z',
  '2024-02-30',
  'Tue, 01 Jan 0000 00:00:00 GMT',
  '1970',
  'Infinity',
  'NaN',
  '',
  'yesterday',
  '2024-01-01T00:00:00+25:00',
  '2024-13-01',
  String(NOW),
  String(NOW - 90 * DAY),
  String(NOW - 90 * DAY - 1),
  String(NOW + 600_000),
  String(NOW + 600_001),
  new Date(NOW).toISOString(),
  String(Math.floor(NOW / 1000)),
];
const dateText = fc.oneof(
  { arbitrary: fc.constantFrom(...DATE_EDGES), weight: 3 },
  // epoch ms around the last time a Date holds (8.64e15)
  fc
    .bigInt({ min: 8_639_999_999_999_000n, max: 9_999_999_999_999_999n })
    .map(String),
  fc.stringMatching(/^\d{1,22}$/),
  fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
  fc.integer({ min: -100 * DAY, max: DAY }).map((offset) => String(NOW + offset)),
  boundaryText(256, false),
);

const validUserId = fc.oneof(
  fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  fc.constantFrom('1', '1.0', '9007199254740991').map((text) => new NumberText(text)),
  fc.stringMatching(/^[1-9]\d{0,19}$/),
  fc.constantFrom('123', '9'.repeat(20), '9007199254740993'),
);
const invalidUserId = fc.oneof(
  fc
    .constantFrom('0', '-5', '1.5', '1e308', '-0', '9007199254740992', '9007199254740993', '1e400')
    .map((text) => new NumberText(text)),
  fc.constantFrom(
    '0123',
    '0',
    '',
    '+1',
    ' 1',
    '1e3',
    '-1',
    '\u0661\u0662',
    '9'.repeat(21),
    '12\u0000',
    null,
    true,
    {},
    [1],
  ),
);

const URL_EDGES = [
  'javascript:alert(1)',
  'http://[::1]:80/a?b#c',
  'https://x.example/%E0%A4%A',
  'blob:https://a.example/uuid',
  'http://a.example/\ud800?x',
  'data:text/html,<x>',
  'file:///etc/passwd?x',
  'https://xn--80ak6aa92e.com/?q#f',
  'http://a.example/' + 'a'.repeat(8200),
  'http://',
  'https://app.example.com/shop?tgWebAppData=user%3D%7B%22id%22%3A1%7D#tgWebAppData=x',
];

/** an optional field: a value, null or missing; when invalid, sometimes of another type */
function optional(value: fc.Arbitrary<unknown>, invalid: boolean) {
  return fc.oneof(
    { arbitrary: value, weight: 6 },
    { arbitrary: fc.constant(null), weight: 1 },
    { arbitrary: fc.constant(ABSENT), weight: 2 },
    ...(invalid ? [{ arbitrary: fc.constantFrom<unknown>(7, 'x', true, {}, []), weight: 1 }] : []),
  );
}

function eventArbitrary(invalid: boolean) {
  const messages = fc.oneof(
    fc.array(
      fc.record({
        address: boundaryText(512, invalid),
        amount: boundaryText(256, invalid),
        extra: optional(jsonValue, invalid),
      }),
      { maxLength: 3 },
    ),
    fc.constant(Array.from({ length: invalid ? 257 : 256 }, () => ({ address: '0:ab', amount: '1' }))),
    ...(invalid ? [fc.constant([{ amount: '5' }])] : []),
  );
  const textFields = Object.fromEntries(
    Object.entries(eventSchema.properties)
      .filter(([, schema]) => 'maxLength' in schema && Array.isArray(schema.type))
      .map(([name, schema]) => [
        name,
        optional(boundaryText((schema as { maxLength: number }).maxLength, invalid), invalid),
      ]),
  );
  const fields = {
    ...textFields,
    user_id: invalid ? fc.oneof(validUserId, invalidUserId, fc.constant(ABSENT)) : validUserId,
    event_name: invalid ? fc.constantFrom('app-launch', ABSENT, null, 1) : fc.constantFrom(...EVENT_NAMES),
    session_id: fc.constantFrom(
      new SessionId('lower'),
      new SessionId('upper'),
      ...(invalid ? [new SessionId('invalid')] : []),
    ),
    app_name: fc.constant(APP),
    is_premium: optional(fc.boolean(), invalid),
    is_success: optional(fc.boolean(), invalid),
    error_code: optional(numberText, invalid),
    auth_type: optional(
      fc.constantFrom<unknown>(0, 1, 'wallet_addr', 'wallet_proof', 'ton_addr', 'ton_proof', new NumberText('-0')),
      invalid,
    ),
    valid_until: optional(dateText, invalid),
    client_timestamp: optional(dateText, invalid),
    url_referer: optional(
      fc.oneof(fc.constantFrom(...URL_EDGES), fc.webUrl({ withQueryParameters: true, withFragments: true })),
      invalid,
    ),
    messages: optional(messages, invalid),
    custom_data: optional(fc.oneof(fc.dictionary(key, jsonValue, { maxKeys: 4 }), deepCustomData(invalid)), invalid),
    extras: fc.dictionary(key, jsonValue, { maxKeys: 3 }),
  };
  return fc.record(fields).map(({ extras, ...given }) => {
    // extra fields first: a generated key equal to a schema field's name does not replace that field
    const built: Record<string, unknown> = { ...extras };
    for (const [name, value] of Object.entries(given)) if (value !== ABSENT) built[name] = value;
    return built;
  });
}

/** mostly events meant to be valid (at the edges of every field), some with a wrong type or length somewhere */
const event = fc.oneof({ arbitrary: eventArbitrary(false), weight: 3 }, { arbitrary: eventArbitrary(true), weight: 1 });
const body = fc.oneof(event, fc.array(event, { minLength: 1, maxLength: 3 }));

// ---- sending and what to expect ----

/** fills in session ids and writes the JSON text, number texts as they are */
function prepare(generated: unknown): { text: string; events: Record<string, unknown>[] } {
  const nonce = crypto.randomBytes(6).toString('hex');
  const numbers: string[] = [];
  const resolve = (value: unknown): unknown => {
    if (value instanceof NumberText) return numbers.push(value.text), `\u0001${nonce}:${numbers.length - 1}`;
    if (value instanceof SessionId) {
      const id = crypto.randomUUID();
      return value.shape === 'upper' ? id.toUpperCase() : value.shape === 'lower' ? id : id.slice(0, 30);
    }
    if (Array.isArray(value)) return value.map(resolve);
    if (value !== null && typeof value === 'object')
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v)]));
    return value;
  };
  const resolved = resolve(generated);
  const placeholder = new RegExp(`"\\\\u0001${nonce}:(\\d+)"`, 'g');
  const text = JSON.stringify(resolved).replace(placeholder, (_, index: string) => numbers[Number(index)]!);
  const parsed = JSON.parse(text) as unknown;
  return { text, events: (Array.isArray(parsed) ? parsed : [parsed]) as Record<string, unknown>[] };
}

/** what PostgreSQL can hold of a sent value: NUL and lone surrogates become U+FFFD, numbers as JSON writes them */
function storableForm(value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('\u0000', '\ufffd').toWellFormed();
  if (typeof value === 'number') return JSON.parse(JSON.stringify(value));
  if (Array.isArray(value)) return value.map(storableForm);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [storableForm(k) as string, storableForm(v)]));
  }
  return value;
}

function hasNonFiniteNumber(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (value !== null && typeof value === 'object') return Object.values(value).some(hasNonFiniteNumber);
  return false;
}

/** fields stored in columns or transformed on the way in, each checked on its own below */
const NOT_KEPT_AS_SENT = new Set([
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
  'auth_type',
  'url_referer',
  'valid_until',
]);

interface StoredRow {
  session_id: string;
  event_name: string;
  is_premium: boolean;
  platform: string | null;
  locale: string | null;
  start_param: string | null;
  props: Record<string, unknown>;
}

function expectStoredAsSent(sent: Record<string, unknown>, row: StoredRow) {
  expect(row.event_name).toBe(sent.event_name);
  expect(row.is_premium).toBe(sent.is_premium === true);
  for (const column of ['platform', 'locale', 'start_param'] as const) {
    expect(row[column]).toEqual(typeof sent[column] === 'string' ? storableForm(sent[column]) : null);
  }
  for (const [name, value] of Object.entries(sent)) {
    if (value === null || NOT_KEPT_AS_SENT.has(name)) continue;
    expect(row.props[storableForm(name) as string], name).toEqual(storableForm(value));
  }
  if (sent.auth_type !== undefined && sent.auth_type !== null) expect([0, 1]).toContain(row.props.auth_type);
  if (typeof sent.url_referer === 'string') expect(typeof row.props.url_referer).toBe('string');
  if (typeof sent.valid_until === 'string') {
    // kept as sent, or read as a time and stored as its ISO form
    const stored = row.props.valid_until;
    if (stored !== storableForm(sent.valid_until))
      expect(new Date(Date.parse(stored as string)).toISOString()).toBe(stored);
  }
}

describe(`events from the schema's edges, on ${SERVICE_BACKEND.name}`, () => {
  let service: TestService;
  let token: string;
  let drop: () => Promise<void> = async () => {};

  beforeAll(async () => {
    const opened = await SERVICE_BACKEND.open();
    drop = opened.drop;
    service = await startTestService({
      ...opened.env,
      RATE_LIMIT_MAX: '1000000',
      MAX_BODY_BYTES: String(16 * 1_048_576),
    });
    expectProjectStore(service.store);
    token = await service.createApp(APP);
  });
  afterAll(async () => {
    await service?.close();
    await drop();
  });

  it('refuses an event naming what failed, or stores it as sent; never "Failed to record"', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (generated) => {
        const { text, events } = prepare(generated);
        const response = await postEvents(service.url, text, { token });
        if (response.status !== 201) {
          expect(response.json, response.text).toMatchObject({ status: 400, message: 'VALIDATION_MISMATCH_REPORT' });
          const errors = response.json.errors as string[];
          expect(errors.length).toBeGreaterThan(0);
          for (const error of errors) expect(error).toMatch(/^(event|events\[\d+\]|body)([.\s[]|$)/);
          return;
        }
        expect(events.some(hasNonFiniteNumber), 'a number JSON cannot carry was accepted').toBe(false);
        await service.loaded();
        // text read as JSON: PGlite's reader drops a byte order mark at the start of a text value (stored all the same)
        const stored = await service.store.sql.query<{ row: string }>(
          `SELECT json_build_object('session_id', session_id, 'event_name', event_name, 'is_premium', is_premium, 'platform', platform,
                                    'locale', locale, 'start_param', start_param, 'props', props)::text AS row
           FROM events WHERE session_id = ANY($1::uuid[])`,
          [`{${events.map((sent) => String(sent.session_id).toLowerCase()).join(',')}}`],
        );
        const rows = stored.map(({ row }) => JSON.parse(row) as StoredRow);
        expect(rows).toHaveLength(events.length);
        for (const sent of events) {
          expectStoredAsSent(sent, rows.find((row) => row.session_id === String(sent.session_id).toLowerCase())!);
        }
      }),
      { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS },
    );
  });
});

// docs/spec.md §2 validation matrix over HTTP: required fields, optional field types, normalisation of what is
// accepted, and "one bad event rejects the whole request and stores nothing".
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents } from '../../helpers/events.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';

let service: TestService;
let token: string;

beforeAll(async () => {
  service = await startTestService({ RATE_LIMIT_MAX: '100000' });
  token = await service.createApp('matrix_app');
});
afterAll(() => service?.close());

async function storedCount(): Promise<number> {
  await service.loaded();
  const [row] = await service.store.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
  return row!.n;
}

async function expectRejected(body: unknown, expectedError: string) {
  const before = await storedCount();
  const response = await postEvents(service.url, body, { token });
  expect(response.status).toBe(400);
  expect(response.json.status).toBe(400);
  expect(response.json.message).toBe('VALIDATION_MISMATCH_REPORT');
  expect(response.json.errors).toContain(expectedError);
  expect(await storedCount()).toBe(before);
}

function without(field: string) {
  const event = makeEvent('matrix_app');
  delete event[field];
  return event;
}

describe('required fields', () => {
  it.each(['user_id', 'event_name', 'session_id', 'app_name'])('refuses an event without %s', (field) =>
    expectRejected(without(field), `event.${field} is required`));

  it.each([
    ['user_id', null, 'event.user_id must be an integer from 1 to 2^53 - 1'],
    ['event_name', 7, 'event.event_name must be a string'],
    ['event_name', 'app-launch', 'event.event_name must be one of the supported event names'],
    ['session_id', 12345, 'event.session_id must be a string'],
    ['session_id', '0a927a1d-6036-4e04-9d40', 'event.session_id must be a UUID'],
    ['session_id', 'zzzzzzzz-6036-4e04-9d40-26e041d4026e', 'event.session_id must be a UUID'],
    ['app_name', 42, 'event.app_name must be a string'],
  ])('refuses %s = %j', (field, value, error) => expectRejected(makeEvent('matrix_app', { [field]: value }), error));
});

describe('user ids', () => {
  const rule = 'event.user_id must be an integer from 1 to 2^53 - 1';

  it.each([
    ['1e308', '1e308'],
    ['-5', '-5'],
    ['1.5', '1.5'],
    ['0', '0'],
    ['2^53', '9007199254740992'],
    ['2^53 + 1', '9007199254740993'],
    ['1e400', '1e400'],
    ['"279058397" (a string of digits)', '"279058397"'],
    ['"0123"', '"0123"'],
    ['""', '""'],
    ['"+1"', '"+1"'],
    ['"-1"', '"-1"'],
    ['"1e3"', '"1e3"'],
    ['" 1"', '" 1"'],
    ['21 digits', `"${'9'.repeat(21)}"`],
    ['true', 'true'],
    ['an object', '{}'],
  ])('refuses %s, naming the field once', async (_label, json) => {
    const text = JSON.stringify(makeEvent('matrix_app')).replace('"user_id":279058397', `"user_id":${json}`);
    const response = await postEvents(service.url, text, { token });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({ status: 400, message: 'VALIDATION_MISMATCH_REPORT', errors: [rule] });
  });

  async function userKeyOf(userId: unknown): Promise<string> {
    const event = makeEvent('matrix_app', { user_id: userId });
    const response = await postEvents(service.url, event, { token });
    expect(response.status, JSON.stringify(userId)).toBe(201);
    await service.loaded();
    const [row] = await service.store.sql.query<{ user: string }>(
      `SELECT encode(user_key, 'hex') AS user FROM events WHERE session_id = $1`,
      [event.session_id],
    );
    return row!.user;
  }

  it('takes every integer from 1 to 2^53 - 1, each its own user', async () => {
    const keys = await Promise.all(
      [1, 123, 279058397, Number.MAX_SAFE_INTEGER - 1, Number.MAX_SAFE_INTEGER].map(userKeyOf),
    );
    expect(new Set(keys).size).toBe(5);
    expect(await userKeyOf(123)).toBe(keys[1]);
  });
});

describe('values JSON or the store cannot hold as sent', () => {
  async function storedEvent(text: string) {
    const response = await postEvents(service.url, text, { token });
    expect(response.status, response.text).toBe(201);
    await service.loaded();
    const sessionId = (JSON.parse(text) as { session_id: string }).session_id;
    const [row] = await service.store.sql.query<{ props: Record<string, unknown> }>(
      'SELECT props FROM events WHERE session_id = $1',
      [sessionId],
    );
    return row!.props;
  }

  it("stores a valid_until out of a date's range as sent instead of failing the request", async () => {
    for (const validUntil of ['9007199254740991', '8640000000000001', '9999999999999999']) {
      const props = await storedEvent(
        JSON.stringify(
          makeEvent('matrix_app', { event_name: 'transaction-sent-for-signature', valid_until: validUntil }),
        ),
      );
      expect(props.valid_until).toBe(validUntil);
    }
    const last = await storedEvent(
      JSON.stringify(
        makeEvent('matrix_app', { event_name: 'transaction-sent-for-signature', valid_until: '8640000000000000' }),
      ),
    );
    expect(last.valid_until).toBe('+275760-09-13T00:00:00.000Z');
  });

  it('refuses numbers too large for JSON (1e400 reads as Infinity), naming where they are', async () => {
    const event = JSON.stringify(makeEvent('matrix_app'));
    const withField = (json: string) => `${event.slice(0, -1)},${json}}`;
    await expectRejected(withField('"error_code":1e400'), 'event.error_code must be a finite number');
    await expectRejected(
      withField('"custom_data":{"a":{"b":[1,-1e999]}}'),
      'event.custom_data.a.b[1] must be a finite number',
    );
    await expectRejected(withField(`"extra":${'9'.repeat(400)}`), 'event.extra must be a finite number');
    await expectRejected(
      `[${event},${withField('"messages":[{"address":"a","amount":"1","fee":1e309}]')}]`,
      'events[1].messages[0].fee must be a finite number',
    );
  });

  it('stores the largest, smallest and negative-zero numbers JSON carries', async () => {
    const props = await storedEvent(
      JSON.stringify(makeEvent('matrix_app')).slice(0, -1) +
        ',"error_code":1.7976931348623157e308,"custom_data":{"tiny":5e-324,"zero":-0,"big":123456789012345678901234567890}}',
    );
    expect(props.error_code).toBe(Number.MAX_VALUE);
    expect(props.custom_data).toEqual({ tiny: 5e-324, zero: 0, big: 1.2345678901234568e29 });
  });
});

describe('optional fields of the wrong type', () => {
  it.each([
    ['is_premium', 'yes', 'a boolean'],
    ['is_success', 1, 'a boolean'],
    ['error_message', 500, 'a string'],
    ['error_code', '300', 'a number'],
    ['wallet_address', 1, 'a string'],
    ['wallet_type', {}, 'a string'],
    ['wallet_version', [], 'a string'],
    ['valid_until', 1795303097, 'a string'],
    ['from', true, 'a string'],
    ['messages', 'to:EQ..', 'an array'],
    ['custom_data', 'free text', 'an object'],
    ['custom_data', [1, 2], 'an object'],
    ['client_timestamp', 1795303097503, 'a string'],
    ['platform', 1, 'a string'],
    ['locale', false, 'a string'],
    ['start_param', 3, 'a string'],
    ['url_referer', {}, 'a string'],
    ['scope', 0, 'a string'],
  ])('refuses %s = %j', (field, value, type) =>
    expectRejected(makeEvent('matrix_app', { [field]: value }), `event.${field} must be ${type}`));

  it('refuses an auth_type outside 0/1 and the known names', async () => {
    await expectRejected(
      makeEvent('matrix_app', { auth_type: 2 }),
      'event.auth_type must be one of 0, 1, "wallet_addr", "wallet_proof", "ton_addr", "ton_proof"',
    );
    await expectRejected(
      makeEvent('matrix_app', { auth_type: 'password' }),
      'event.auth_type must be one of 0, 1, "wallet_addr", "wallet_proof", "ton_addr", "ton_proof"',
    );
  });

  it('refuses messages that are not {address, amount} strings', async () => {
    await expectRejected(
      makeEvent('matrix_app', { messages: [{ address: 'EQA', amount: 5 }] }),
      'event.messages[0].amount must be a string',
    );
    await expectRejected(
      makeEvent('matrix_app', { messages: [{ amount: '5' }] }),
      'event.messages[0].address is required',
    );
  });

  it('refuses nesting deeper than 16 levels and never crashes on very deep input', async () => {
    let deep: unknown = {};
    for (let i = 0; i < 20; i++) deep = { inner: deep };
    await expectRejected(
      makeEvent('matrix_app', { custom_data: deep }),
      'event is nested too deeply (at most 16 levels)',
    );
    const hostile = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const response = await postEvents(service.url, `{"custom_data":${hostile}}`, { token });
    expect(response.status).toBe(400);
  });
});

describe('a bad event inside an array', () => {
  it('rejects the whole request, names the event, and stores none of it', async () => {
    const body = [makeEvent('matrix_app'), makeEvent('matrix_app', { user_id: 'abc' }), makeEvent('matrix_app')];
    await expectRejected(body, 'events[1].user_id must be an integer from 1 to 2^53 - 1');
  });

  it('refuses an empty array and more events than the limit', async () => {
    await expectRejected([], 'body must contain at least one event');
    const tooMany = Array.from({ length: 101 }, () => makeEvent('matrix_app'));
    await expectRejected(tooMany, 'body has 101 events; at most 100 are accepted per request');
  });

  it('refuses a body that is neither an object nor an array', async () => {
    await expectRejected('"app-init"', 'body must be an event object or an array of event objects');
  });
});

describe('what is accepted', () => {
  async function storedProps(sessionId: string) {
    await service.loaded();
    const [row] = await service.store.sql.query<{ props: Record<string, unknown>; session_id: string }>(
      'SELECT props, session_id::text FROM events WHERE session_id = $1',
      [sessionId],
    );
    return row;
  }

  it('stores auth_type in one numeric form whatever name was sent', async () => {
    const forms: [unknown, number][] = [
      [0, 0],
      [1, 1],
      ['wallet_addr', 0],
      ['wallet_proof', 1],
      ['ton_addr', 0],
      ['ton_proof', 1],
    ];
    for (const [sent, stored] of forms) {
      const event = makeEvent('matrix_app', { event_name: 'connection-completed', auth_type: sent });
      expect((await postEvents(service.url, event, { token })).status).toBe(201);
      expect((await storedProps(event.session_id as string))!.props.auth_type).toBe(stored);
    }
  });

  it('accepts null optional fields, error_code null, unknown extra fields (kept), and non-v4 uppercase session ids', async () => {
    const sessionId = '0A927A1D-6036-1E04-0D40-26E041D4026E';
    const event = makeEvent('matrix_app', {
      event_name: 'connection-error',
      session_id: sessionId,
      is_success: false,
      error_code: null,
      error_message: 'User rejects',
      wallet_address: null,
      wallet_type: null,
      trace_id: 'c0ffee',
      custom_data: { ton_connect_sdk_lib: '3.4.1', ton_connect_ui_lib: null },
      signed_transaction: 'te6cc...',
    });
    const response = await postEvents(service.url, event, { token });
    expect(response.status).toBe(201);
    const row = await storedProps(sessionId.toLowerCase());
    expect(row!.props).toMatchObject({
      trace_id: 'c0ffee',
      error_message: 'User rejects',
      signed_transaction: 'te6cc...',
      custom_data: { ton_connect_sdk_lib: '3.4.1', ton_connect_ui_lib: null },
    });
    expect(row!.props).not.toHaveProperty('wallet_address');
  });

  it('parses valid_until (seconds) and keeps the referer without query or fragment', async () => {
    const event = makeEvent('matrix_app', {
      event_name: 'transaction-sent-for-signature',
      valid_until: '1795303397',
      url_referer: 'https://app.example.com/shop?tgWebAppStartParam=x#tgWebAppData=user%3D%7B%22id%22%3A279058397%7D',
      messages: [{ address: '0:abc', amount: '1000000' }],
    });
    expect((await postEvents(service.url, event, { token })).status).toBe(201);
    const row = await storedProps(event.session_id as string);
    expect(row!.props.valid_until).toBe(new Date(1795303397 * 1000).toISOString());
    expect(row!.props.url_referer).toBe('https://app.example.com/shop');
  });

  it('stores text PostgreSQL cannot hold as is (NUL, lone surrogates) instead of failing the batch', async () => {
    const event = makeEvent('matrix_app', {
      event_name: 'custom-event',
      custom_data: { 'k\u0000ey': 'a\u0000b\ud800c', emoji: '🚀' },
    });
    expect((await postEvents(service.url, event, { token })).status).toBe(201);
    const row = await storedProps(event.session_id as string);
    expect(row!.props.custom_data).toEqual({ 'k\ufffdey': 'a\ufffdb\ufffdc', emoji: '🚀' });
  });

  it.each([
    'purchase-init',
    'purchase-success',
    'purchase-cancelled',
    'purchase-failed',
    'register-invoice',
    'disconnection',
  ])('accepts the event name %s', async (name) => {
    expect((await postEvents(service.url, makeEvent('matrix_app', { event_name: name }), { token })).status).toBe(201);
  });
});

// Server keys on POST /events, on both engines: the integrator's bot sends without an Origin with its app's server
// key, and gets the same validation, pseudonymisation and 201; a token without an Origin, another app's key, a
// revoked or made-up key are refused with the spec's messages; server events never come with a public token.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/tokens/registry.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND } from '../helpers/stores.ts';

const SUCCESS = { message: 'Success record.' };
const TOKEN_INVALID = { message: 'Token is invalid.' };
const DOMAIN_MISMATCH = { message: 'The domain name does not match.' };
const APP_NAME_INVALID = { message: 'Invalid app_name is specified.' };
/** a Telegram id that must appear nowhere in the store */
const RAW_USER_ID = 987654321987;

describe(`server keys on ${SERVICE_BACKEND.name}`, () => {
  let service: TestService;
  let drop: () => Promise<void>;
  let token: string;
  let key: string;
  let otherKey: string;
  const post = (key: string, body: unknown) =>
    postEvents(service.url, body, { origin: null, headers: { authorization: `Bearer ${key}` } });

  beforeAll(async () => {
    const backend = await SERVICE_BACKEND.open();
    drop = backend.drop;
    service = await startTestService(backend.env);
    expectProjectStore(service.store);
    token = await service.createApp('bot_app');
    await service.createApp('other_bot_app');
    ({ key } = await service.services.serverKeys.create('bot_app', OPERATOR));
    ({ key: otherKey } = await service.services.serverKeys.create('other_bot_app', OPERATOR));
  });
  afterAll(async () => {
    await service?.close();
    await drop?.();
  });

  it('accepts server events without an Origin, pseudonymised like any other', async () => {
    // an app of its own: the test reads back every event of the app, and other tests send bot_app events too
    await service.createApp('counted_bot_app');
    const { key } = await service.services.serverKeys.create('counted_bot_app', OPERATOR);
    expect(key).toMatch(/^tma_server_[A-Za-z0-9_-]{32}$/);
    const session = crypto.randomUUID();
    const sent = await post(key, [
      makeEvent('counted_bot_app', {
        event_name: 'bot-start',
        user_id: RAW_USER_ID,
        session_id: session,
        start_param: 'camp1',
      }),
      makeEvent('counted_bot_app', {
        event_name: 'successful-payment',
        user_id: RAW_USER_ID,
        session_id: session,
        custom_data: { amount: 50, currency: 'XTR', invoice_payload: 'gold' },
      }),
      makeEvent('counted_bot_app', { event_name: 'app-init', user_id: RAW_USER_ID, session_id: session }),
    ]);
    expect(sent.status, sent.text).toBe(201);
    expect(sent.json).toEqual(SUCCESS);
    await service.loaded();
    const rows = await service.store.sql.query<{ event_name: string; start_param: string | null; text: string }>(
      `SELECT e.event_name, e.start_param, row_to_json(e)::text AS text FROM events e JOIN apps a ON a.id = e.app_id
       WHERE a.app_name = 'counted_bot_app' ORDER BY e.event_name`,
    );
    expect(rows.map((row) => [row.event_name, row.start_param])).toEqual([
      ['app-init', ''],
      ['bot-start', 'camp1'],
      ['successful-payment', ''],
    ]);
    for (const row of rows) expect(row.text).not.toContain(String(RAW_USER_ID));
    // the same keyed hash as a token's event of that user: one user across bot and Mini App
    const [users] = await service.store.sql.query<{ n: number }>(
      `SELECT count(DISTINCT e.user_key)::int AS n FROM events e JOIN apps a ON a.id = e.app_id WHERE a.app_name = 'counted_bot_app'`,
    );
    expect(users!.n).toBe(1);
    const dump = await service.store.sql.query<{ text: string }>(
      `SELECT row_to_json(t)::text AS text FROM audit_log t`,
    );
    expect(dump.some((row) => row.text.includes('server_key.create'))).toBe(true);
  });

  it('validates a server event as strictly as any other', async () => {
    const noAmount = await post(
      key,
      makeEvent('bot_app', { event_name: 'successful-payment', custom_data: { currency: 'XTR' } }),
    );
    expect(noAmount.status).toBe(400);
    expect(noAmount.json).toMatchObject({ status: 400, message: 'VALIDATION_MISMATCH_REPORT' });
    expect(noAmount.json.errors).toEqual(['event.custom_data.amount is required']);
    const badAmount = await post(
      key,
      makeEvent('bot_app', { event_name: 'refunded-payment', custom_data: { amount: -5, currency: 'XTR' } }),
    );
    expect(badAmount.json.errors).toEqual(['event.custom_data.amount must be at least 0']);
    const badSession = await post(key, makeEvent('bot_app', { event_name: 'bot-command', session_id: 'nope' }));
    expect(badSession.json.errors).toEqual(['event.session_id must be a UUID']);
  });

  it('refuses a token without an Origin, and server events with a token', async () => {
    const noOrigin = await postEvents(service.url, makeEvent('bot_app'), { token, origin: null });
    expect(noOrigin.status).toBe(403);
    expect(noOrigin.json).toEqual(DOMAIN_MISMATCH);
    const forged = await postEvents(
      service.url,
      makeEvent('bot_app', { event_name: 'successful-payment', custom_data: { amount: 1_000, currency: 'XTR' } }),
      { token },
    );
    expect(forged.status).toBe(400);
    expect(forged.json).toMatchObject({
      message: 'VALIDATION_MISMATCH_REPORT',
      errors: ['events[0].event_name "successful-payment" is accepted only with a server key'],
    });
  });

  it("refuses another app's key, a made-up key and a revoked key with the spec's messages", async () => {
    const other = await post(otherKey, makeEvent('bot_app', { event_name: 'bot-start' }));
    expect(other.status).toBe(400);
    expect(other.json).toEqual(APP_NAME_INVALID);
    const madeUp = await post(`tma_server_${'x'.repeat(32)}`, makeEvent('bot_app'));
    expect(madeUp.status).toBe(400);
    expect(madeUp.json).toEqual(TOKEN_INVALID);
    const malformed = await post('tma_server_short', makeEvent('bot_app'));
    expect(malformed.json).toEqual(TOKEN_INVALID);

    const { key: doomed } = await service.services.serverKeys.create('bot_app', OPERATOR);
    expect((await post(doomed, makeEvent('bot_app', { event_name: 'bot-command' }))).status).toBe(201);
    await service.services.serverKeys.revoke(doomed.slice(0, 19), OPERATOR);
    const revoked = await post(doomed, makeEvent('bot_app', { event_name: 'bot-command' }));
    expect(revoked.status).toBe(400);
    expect(revoked.json).toEqual(TOKEN_INVALID);
    // a read key is not a server key
    const { key: readKey } = await service.services.readKeys.create('bot_app', OPERATOR);
    const read = await post(readKey, makeEvent('bot_app'));
    expect(read.status).toBe(400);
    expect(read.json).toEqual({ message: 'The token is not specified in the headers or is specified incorrectly.' });
  });
});

// The traffic of the official @telegram-apps/analytics 1.6.4 client, as observed on the wire: gzip arrays
// of up to 20 events, TGA-Auth-Token, TON Connect shapes with nulls and extra fields, purchase events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
let token: string;

beforeAll(async () => {
  service = await startTestService();
  token = await service.createApp('testapp', 'mini.example.org');
});
afterAll(() => service?.close());

const envelope = {
  session_id: '0a927a1d-6036-4e04-9d40-26e041d4026e',
  user_id: 279058397,
  app_name: 'testapp',
  is_premium: true,
  platform: 'tdesktop',
  locale: 'ru',
  start_param: '',
};
const libs = { ton_connect_sdk_lib: '3.4.1', ton_connect_ui_lib: '2.3.1' };
const connection = {
  wallet_address: '0:9a1f0e8c3d3b3c1b9a3f2e8c7d6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b',
  wallet_state_init: 'te6cckECFgEAAwQAAgE0AQ...',
  wallet_type: 'tonkeeper',
  wallet_version: '4.1.0',
  auth_type: 'ton_proof',
  custom_data: { ...libs, client_id: 'b1c2', wallet_id: 'tonkeeper', chain_id: '-239', provider: 'http' },
};
const messages = [{ address: '0:abcd', amount: '1000000', payload: 'te6cc...', state_init: null }];

function batch(): Record<string, unknown>[] {
  const at = (offset: number) => String(Date.now() - 20_000 + offset);
  const events: Record<string, unknown>[] = [
    { event_name: 'app-init' },
    { event_name: 'connection-started', custom_data: libs, trace_id: 't1' },
    { event_name: 'connection-completed', is_success: true, trace_id: 't1', ...connection },
    {
      event_name: 'connection-error',
      is_success: false,
      error_message: 'User rejects',
      error_code: 300,
      trace_id: 't2',
      custom_data: libs,
    },
    {
      event_name: 'connection-error',
      is_success: false,
      error_message: 'Unknown',
      error_code: null,
      trace_id: 't3',
      custom_data: libs,
    },
    { event_name: 'connection-restoring-completed', is_success: true, trace_id: 't4', ...connection },
    {
      event_name: 'connection-restoring-error',
      is_success: false,
      error_message: 'no session',
      trace_id: 't5',
      custom_data: libs,
    },
    {
      event_name: 'transaction-sent-for-signature',
      trace_id: 't6',
      ...connection,
      valid_until: '1795303397',
      from: connection.wallet_address,
      messages: [{ address: '0:abcd', amount: '1000000' }],
    },
    {
      event_name: 'transaction-signed',
      is_success: true,
      signed_transaction: 'te6cckEB...',
      trace_id: 't6',
      ...connection,
      valid_until: '1795303397',
      from: connection.wallet_address,
      messages: [{ address: '0:abcd', amount: '1000000' }],
    },
    {
      event_name: 'transaction-signing-failed',
      is_success: false,
      error_message: 'User declined',
      error_code: 300,
      trace_id: 't7',
      ...connection,
      valid_until: '1795303397',
      from: connection.wallet_address,
      messages,
    },
    {
      event_name: 'disconnection',
      scope: 'dapp',
      trace_id: 't8',
      ...connection,
      wallet_address: null,
      wallet_type: null,
    },
    { event_name: 'purchase-init', slug: 'inv-1' },
    { event_name: 'purchase-success', slug: 'inv-1' },
    { event_name: 'purchase-cancelled', slug: 'inv-2' },
    { event_name: 'purchase-failed', slug: 'inv-3' },
    {
      event_name: 'register-invoice',
      slug: 'inv-1',
      title: 'Gold',
      description: 'x',
      payload: 'p',
      currency: 'XTR',
      prices: [{ label: 'Gold', amount: 100 }],
    },
    { event_name: 'custom-event', custom_data: { button: 'buy' } },
    { event_name: 'app-hide' },
    { event_name: 'app-hide' },
    { event_name: 'app-hide' },
  ];
  return events.map((event, index) => ({ ...envelope, client_timestamp: at(index), ...event }));
}

describe('official client traffic', () => {
  it('stores a 20-event gzip batch sent with TGA-Auth-Token, once even when the client resends it', async () => {
    const body = batch();
    const first = await postEvents(service.url, body, {
      token,
      header: 'TGA-Auth-Token',
      gzip: true,
      origin: 'https://mini.example.org',
    });
    expect(first.status).toBe(201);
    expect(first.text).toBe('{"message":"Success record."}');
    // the answer was "lost": the client sends the same batch again from localStorage
    const again = await postEvents(service.url, body, {
      token,
      header: 'TGA-Auth-Token',
      gzip: true,
      origin: 'https://mini.example.org',
    });
    expect(again.status).toBe(201);

    await service.loaded();
    const rows = await service.store.sql.query<{ event_name: string; props: Record<string, unknown> }>(
      'SELECT event_name, props FROM events ORDER BY occurred_at',
    );
    expect(rows).toHaveLength(20);
    const completed = rows.find((row) => row.event_name === 'connection-completed')!;
    expect(completed.props).toMatchObject({
      auth_type: 1,
      wallet_type: 'tonkeeper',
      trace_id: 't1',
      custom_data: { chain_id: '-239' },
    });
    const failed = rows.find((row) => row.event_name === 'transaction-signing-failed')!;
    expect(failed.props.messages).toEqual(messages);
    expect(rows.find((row) => row.event_name === 'register-invoice')!.props.prices).toEqual([
      { label: 'Gold', amount: 100 },
    ]);
    const [counts] = await service.store.sql.query<{ total: number }>(
      'SELECT sum(events)::int AS total FROM daily_event_counts',
    );
    expect(counts!.total).toBe(20);
  });
});

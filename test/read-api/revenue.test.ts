// Revenue on both engines: a seeded data set of client purchases (with the app's token) and bot payments and refunds
// (with a server key), read back through GET /api/v1/apps/{app}/revenue and compared with answers worked out by hand.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../src/events/days.ts';
import { OPERATOR } from '../../src/tokens/registry.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { SERVICE_BACKENDS } from '../helpers/stores.ts';

const today = new Date().toISOString().slice(0, 10);
const dayA = addDays(today, -2);
const dayB = addDays(today, -1);
const at = (day: string, minutes: number) => String(Date.parse(`${day}T00:00:00Z`) + 9 * 3_600_000 + minutes * 60_000);

describe.each(SERVICE_BACKENDS)('revenue on $name', ({ open }) => {
  let service: TestService;
  let drop: () => Promise<void>;
  let readKey: string;

  beforeAll(async () => {
    const backend = await open();
    drop = backend.drop;
    service = await startTestService(backend.env);
    const token = await service.createApp('shop_app');
    const otherToken = await service.createApp('other_shop');
    const { key: serverKey } = await service.services.serverKeys.create('shop_app', OPERATOR);
    ({ key: readKey } = await service.services.readKeys.create('shop_app', OPERATOR));
    const client = (user: number, name: string, day: string, minutes: number) =>
      makeEvent('shop_app', {
        user_id: user,
        event_name: name,
        slug: 'gold',
        client_timestamp: at(day, minutes),
      });
    const bot = (user: number, name: string, day: string, minutes: number, amount: number, currency = 'XTR') =>
      makeEvent('shop_app', {
        user_id: user,
        event_name: name,
        session_id: crypto.randomUUID(),
        client_timestamp: at(day, minutes),
        custom_data: { amount, currency, invoice_payload: 'gold' },
      });
    const fromPage = await postEvents(
      service.url,
      [
        client(1, 'purchase-init', dayA, 0),
        client(1, 'purchase-success', dayA, 1),
        client(2, 'purchase-init', dayA, 2),
        client(2, 'purchase-cancelled', dayA, 3),
        client(2, 'purchase-init', dayB, 0),
        client(2, 'purchase-success', dayB, 1),
        client(5, 'app-init', dayB, 5),
      ],
      { token },
    );
    expect(fromPage.status, fromPage.text).toBe(201);
    const fromBot = await postEvents(
      service.url,
      [
        bot(1, 'successful-payment', dayA, 2, 50),
        bot(2, 'successful-payment', dayB, 2, 100),
        bot(3, 'successful-payment', dayB, 3, 30),
        bot(3, 'refunded-payment', dayB, 9, 30),
        // not Stars: a paying user, but no Stars and no Stars payment
        bot(4, 'successful-payment', dayB, 4, 500, 'USD'),
        // before the period
        bot(1, 'successful-payment', addDays(today, -5), 0, 1_000),
      ],
      { origin: null, headers: { authorization: `Bearer ${serverKey}` } },
    );
    expect(fromBot.status, fromBot.text).toBe(201);
    // another app's purchases count for it alone
    expect(
      (
        await postEvents(service.url, makeEvent('other_shop', { event_name: 'purchase-init', user_id: 1 }), {
          token: otherToken,
        })
      ).status,
    ).toBe(201);
    await service.loaded();
  });
  afterAll(async () => {
    await service?.close();
    await drop?.();
  });

  it('reads Stars per day, paying users and the purchase conversion of the period', async () => {
    const response = await fetch(`${service.url}/api/v1/apps/shop_app/revenue?from=${dayA}&to=${today}`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      currency: 'XTR',
      stars: 150, // 50 + 100 + 30 paid, 30 refunded
      stars_paid: 180,
      stars_refunded: 30,
      payments: 3,
      refunds: 1,
      paying_users: 4, // users 1, 2, 3 and 4 (who paid in USD)
      purchase_init: 3,
      purchase_success: 2,
      conversion: 2 / 3,
      days: [
        { day: dayA, stars: 50, payments: 1, refunds: 0, paying_users: 1 },
        { day: dayB, stars: 100, payments: 2, refunds: 1, paying_users: 3 },
      ],
    });
  });

  it('is empty for a period without payment events, and refuses a key of nobody', async () => {
    const response = await fetch(`${service.url}/api/v1/apps/shop_app/revenue?from=${today}&to=${today}`, {
      headers: { authorization: `Bearer ${readKey}` },
    });
    expect(await response.json()).toEqual({
      currency: 'XTR',
      stars: 0,
      stars_paid: 0,
      stars_refunded: 0,
      payments: 0,
      refunds: 0,
      paying_users: 0,
      purchase_init: 0,
      purchase_success: 0,
      conversion: null,
      days: [],
    });
    const refused = await fetch(`${service.url}/api/v1/apps/shop_app/revenue`);
    expect(refused.status).toBe(401);
  });
});

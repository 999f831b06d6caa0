// Revenue on both engines: a seeded data set of Mini App purchases (with the app's token: register-invoice and the
// official client's purchase-* events, in sessions whose launch Telegram signed) and bot payments and refunds (with a
// server key), read back through GET /api/v1/apps/{app}/revenue and compared with answers worked out by hand, figure
// by figure and source by source; then a hostile page holding the public token reprices, inflates and floods.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../src/events/days.ts';
import { OPERATOR } from '../../src/tokens/registry.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND } from '../helpers/stores.ts';
import { launchSigner } from '../helpers/telegram-launch.ts';

const signer = launchSigner();
const BOT_ID = 6_100_200_300;

const today = new Date().toISOString().slice(0, 10);
const dayA = addDays(today, -2);
const dayB = addDays(today, -1);
const at = (day: string, minutes: number) => String(Date.parse(`${day}T00:00:00Z`) + 9 * 3_600_000 + minutes * 60_000);

/** the invoice as the official client's registerInvoice(invoice) sends it: its fields at the event's top level */
const invoice = (slug: string, amount: number, payload: string, currency = 'XTR') => ({
  slug,
  title: payload,
  description: `${payload}, for the tests`,
  payload,
  currency,
  prices: [{ label: payload, amount }],
});

describe(`revenue on ${SERVICE_BACKEND.name}`, () => {
  let service: TestService;
  let drop: () => Promise<void>;
  /** the shop every test but one only reads */
  let shop: Shop;

  /** an app seeded with the data set below; how to post more of its Mini App's events and read its revenue */
  async function seedShop(app: string) {
    const { token } = await service.services.registry.createApp(
      { appName: app, bot: '@shop_test_bot', botId: String(BOT_ID), domains: ['app.example.com'] },
      OPERATOR,
    );
    const { key: serverKey } = await service.services.serverKeys.create(app, OPERATOR);
    const { key: readKey } = await service.services.readKeys.create(app, OPERATOR);
    /** each user's one launch, signed by Telegram: their page's events carry its session */
    const sessions = new Map<number, string>();
    const client = (user: number, name: string, day: string, minutes: number, extra: Record<string, unknown> = {}) =>
      makeEvent(app, {
        user_id: user,
        event_name: name,
        client_timestamp: at(day, minutes),
        session_id: sessions.get(user) ?? crypto.randomUUID(),
        ...extra,
      });
    /** the user's launch, verified: later events of theirs come in its session */
    const launch = (user: number) => {
      const sessionId = crypto.randomUUID();
      sessions.set(user, sessionId);
      return makeEvent(app, {
        user_id: user,
        session_id: sessionId,
        init_data: signer.sign({ botId: BOT_ID, user: { id: user, first_name: 'Buyer' } }),
      });
    };
    const bot = (user: number, name: string, day: string, minutes: number, data: Record<string, unknown>) =>
      makeEvent(app, {
        user_id: user,
        event_name: name,
        session_id: crypto.randomUUID(),
        client_timestamp: at(day, minutes),
        custom_data: { currency: 'XTR', ...data },
      });
    const fromPage = async (events: unknown[]) => {
      const response = await postEvents(service.url, events, { token });
      expect(response.status, response.text).toBe(201);
    };
    const revenue = async (from: string, to: string, filter = '') => {
      const response = await fetch(`${service.url}/api/v1/apps/${app}/revenue?from=${from}&to=${to}${filter}`, {
        headers: { authorization: `Bearer ${readKey}` },
      });
      expect(response.status).toBe(200);
      return response.json();
    };
    const purchase = (user: number, slug: string, day: string, minutes: number, outcome = 'purchase-success') => [
      client(user, 'purchase-init', day, minutes, { slug }),
      client(user, outcome, day, minutes + 1, { slug }),
    ];
    await fromPage([1, 3, 4, 5, 6, 7, 8, 10, 90, 91].map(launch));
    await fromPage([
      // gold was registered long before the period, by another user's launch; registered again later at another
      // price, which does not reprice it
      client(90, 'register-invoice', addDays(today, -10), 0, invoice('gold', 100, 'gold-pack')),
      client(91, 'register-invoice', today, 0, invoice('gold', 120, 'gold-pack')),
      client(3, 'register-invoice', dayB, 0, invoice('silver', 50, 'silver-pack')),
      client(5, 'register-invoice', dayA, 0, invoice('bronze', 20, 'bronze-pack')),
      // registered under its link: the slug is the part after "$"
      client(10, 'register-invoice', dayB, 0, invoice('https://t.me/$ruby', 30, 'ruby-pack')),
      client(8, 'register-invoice', dayB, 0, invoice('fiat', 999, 'fiat-pack', 'USD')),
      // 1: Mini App only, 100 Stars on day A (refunded by the bot on day B)
      ...purchase(1, 'gold', dayA, 10),
      // 5 and 6: an invoice cancelled and one failed: no Stars
      ...purchase(5, 'bronze', dayA, 20, 'purchase-cancelled'),
      ...purchase(6, 'bronze', dayB, 20, 'purchase-failed'),
      // 3: the same purchase reported by the Mini App and by the bot: 50 Stars, once, from the bot
      ...purchase(3, 'silver', dayB, 30),
      // 4: paid, but its slug was never registered: a purchase, no Stars
      ...purchase(4, 'mystery', dayB, 40),
      // 7: paid before its invoice arrives (which one test posts, after a first read)
      ...purchase(7, 'late', dayB, 50),
      // 8: an invoice in another currency: a purchase, no Stars
      ...purchase(8, 'fiat', dayB, 60),
      // 10: the bot reports it without an invoice_payload: matched by its Stars, once
      ...purchase(10, 'ruby', dayB, 70),
    ]);
    const fromBot = await postEvents(
      service.url,
      [
        // 2: bot only, 50 Stars on day A
        bot(2, 'successful-payment', dayA, 0, { amount: 50, invoice_payload: 'silver-pack' }),
        // 3's purchase, a minute before the Mini App's purchase-success
        bot(3, 'successful-payment', dayB, 30, { amount: 50, invoice_payload: 'silver-pack' }),
        bot(10, 'successful-payment', dayB, 72, { amount: 30 }),
        bot(1, 'refunded-payment', dayB, 0, { amount: 100, invoice_payload: 'gold-pack' }),
        // not Stars: a paying user, but no Stars and no Stars payment
        bot(9, 'successful-payment', dayB, 80, { amount: 500, currency: 'USD' }),
        // before the period
        bot(1, 'successful-payment', addDays(today, -5), 0, { amount: 1_000 }),
      ],
      { origin: null, headers: { authorization: `Bearer ${serverKey}` } },
    );
    expect(fromBot.status, fromBot.text).toBe(201);
    return { client, launch, fromPage, revenue, serverKey };
  }
  type Shop = Awaited<ReturnType<typeof seedShop>>;

  beforeAll(async () => {
    const backend = await SERVICE_BACKEND.open();
    drop = backend.drop;
    service = await startTestService({ ...backend.env, TELEGRAM_PUBLIC_KEY: signer.publicKeyHex });
    expectProjectStore(service.store);
    shop = await seedShop('shop_app');
    const otherToken = await service.createApp('other_shop');
    // another app's invoice of the same slug and purchases count for it alone
    const other = await postEvents(
      service.url,
      [
        makeEvent('other_shop', { event_name: 'register-invoice', user_id: 1, ...invoice('gold', 999, 'gold-pack') }),
        makeEvent('other_shop', { event_name: 'purchase-init', user_id: 1, slug: 'gold' }),
      ],
      { token: otherToken },
    );
    expect(other.status, other.text).toBe(201);
    await service.loaded();
  });
  afterAll(async () => {
    await service?.close();
    await drop?.();
  });

  it('counts Stars from the bot and from the Mini App per day, each purchase once, with the conversion', async () => {
    expect(await shop.revenue(dayA, today)).toEqual({
      period: { from: dayA, to: today },
      currency: 'XTR',
      stars: 130, // 100 + 50 + 50 + 30 paid, 100 refunded
      stars_paid: 230,
      stars_refunded: 100,
      stars_from_bot: 130, // 2, 3 and 10
      stars_from_mini_app: 100, // 1
      payments: 4,
      payments_from_bot: 3,
      payments_from_mini_app: 1,
      refunds: 1,
      paying_users: 8, // 1, 2, 3, 4, 7, 8, 9 (who paid in USD) and 10
      purchase_init: 8,
      purchase_success: 6,
      purchase_success_unpriced: 3, // 4 (never registered), 7 (not registered yet), 8 (USD)
      conversion: 6 / 8,
      unverified: { stars: 0, payments: 0, purchase_success: 0, paying_users: 0 },
      days: [
        {
          day: dayA,
          stars: 150,
          stars_from_bot: 50,
          stars_from_mini_app: 100,
          payments: 2,
          refunds: 0,
          paying_users: 2,
          complete: true,
        },
        {
          day: dayB,
          stars: -20, // 50 + 30 paid, 100 refunded
          stars_from_bot: 80,
          stars_from_mini_app: 0,
          payments: 2,
          refunds: 1,
          paying_users: 6,
          complete: true,
        },
      ],
    });
  });

  it('prices a purchase by an invoice registered after it, once the invoice arrives', async () => {
    // a shop of its own: the invoice it posts changes the figures the other tests read
    const late = await seedShop('late_shop');
    await service.loaded();
    expect(await late.revenue(dayA, today)).toMatchObject({ stars_from_mini_app: 100, purchase_success_unpriced: 3 });
    await late.fromPage([late.client(7, 'register-invoice', today, 5, invoice('late', 70, 'late-pack'))]);
    await service.loaded();
    const after = await late.revenue(dayA, today);
    expect(after).toMatchObject({
      stars: 200,
      stars_paid: 300,
      stars_from_bot: 130,
      stars_from_mini_app: 170,
      payments: 5,
      payments_from_mini_app: 2,
      purchase_success: 6,
      purchase_success_unpriced: 2,
    });
    expect(after.days[1]).toEqual({
      day: dayB,
      stars: 50,
      stars_from_bot: 80,
      stars_from_mini_app: 70,
      payments: 3,
      refunds: 1,
      paying_users: 6,
      complete: true,
    });
    // a period of day B alone: the gold invoice registered before it still prices nothing there (1 paid on day A),
    // and 3's purchase is still the bot's
    expect(await late.revenue(dayB, dayB)).toMatchObject({
      stars_from_bot: 80,
      stars_from_mini_app: 70,
      payments_from_mini_app: 1,
      purchase_success: 5,
    });
    expect(await late.revenue(dayA, dayA)).toMatchObject({ stars_from_bot: 50, stars_from_mini_app: 100 });
  });

  it('keeps every figure as the real purchases make it against a hostile page: repriced slugs, 1,000 prices, 5,000 made-up buyers', async () => {
    // a shop of its own: the attack's events would change the figures the other tests read
    const hostile = await seedShop('hostile_shop');
    await service.loaded();
    const before = await hostile.revenue(dayA, today);
    expect(before).toMatchObject({ stars_from_mini_app: 100, paying_users: 8, conversion: 6 / 8 });
    // a real Telegram account of the attacker's, opening the app for real: its session is verified
    await hostile.fromPage([hostile.launch(95)]);
    await hostile.fromPage([
      // reprice gold upwards and into another currency, from made-up users and from the real account
      hostile.client(500, 'register-invoice', today, 30, invoice('gold', 1_000_000_000, 'gold-pack')),
      hostile.client(501, 'register-invoice', today, 31, invoice('gold', 100, 'gold-pack', 'USD')),
      hostile.client(95, 'register-invoice', today, 32, invoice('gold', 1_000_000_000, 'gold-pack')),
      hostile.client(95, 'register-invoice', today, 33, invoice('gold', 100, 'gold-pack', 'EUR')),
      // an invoice of 1,000 prices of a billion Stars, and a purchase of it
      hostile.client(502, 'register-invoice', today, 34, {
        ...invoice('diamond', 0, 'diamond-pack'),
        prices: Array.from({ length: 1_000 }, (_, i) => ({ label: `part ${i}`, amount: 1_000_000_000 })),
      }),
      ...['purchase-init', 'purchase-success'].map((name) => hostile.client(502, name, today, 35, { slug: 'diamond' })),
    ]);
    // 5,000 made-up buyers of gold, 50 a request (100 events), within the rate limit
    for (let request = 0; request < 100; request++) {
      const buyers = Array.from({ length: 50 }, (_, i) => 10_000 + request * 50 + i);
      await hostile.fromPage(
        buyers.flatMap((user) =>
          ['purchase-init', 'purchase-success'].map((name) => hostile.client(user, name, today, 40, { slug: 'gold' })),
        ),
      );
    }
    await service.loaded();
    const after = await hostile.revenue(dayA, today);
    const { unverified, ...figures } = after;
    const { unverified: _none, ...figuresBefore } = before;
    expect(figures).toEqual(figuresBefore);
    // what the pages reported is shown apart: 5,000 purchases of gold at its first price, and the diamond unpriced
    expect(unverified).toEqual({ stars: 500_000, payments: 5_000, purchase_success: 5_001, paying_users: 5_001 });
    // a real purchase of gold after the attack still counts at gold's first price
    await hostile.fromPage(
      ['purchase-init', 'purchase-success'].map((name) => hostile.client(95, name, today, 50, { slug: 'gold' })),
    );
    await service.loaded();
    expect(await hostile.revenue(dayA, today)).toMatchObject({
      stars_from_mini_app: 200,
      payments_from_mini_app: 2,
      paying_users: 9,
      conversion: 7 / 9,
    });
  });

  it('keeps the payments of the users first seen with the filter, of none when nobody was', async () => {
    // every buyer launched from tdesktop with Premium
    const all = await shop.revenue(dayA, today);
    expect(all.stars_paid).toBeGreaterThan(0);
    expect(await shop.revenue(dayA, today, '&platform=tdesktop&premium=true')).toEqual(all);
    expect(await shop.revenue(dayA, today, '&platform=android')).toMatchObject({
      stars: 0,
      stars_paid: 0,
      payments: 0,
      paying_users: 0,
      purchase_init: 0,
      days: [],
    });
    expect(await shop.revenue(dayA, today, '&premium=false')).toMatchObject({ stars_paid: 0, paying_users: 0 });
  });

  it("names each figure's source in /openapi.json", async () => {
    type Schema = { properties: Record<string, { description?: string }> };
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as {
      paths: Record<string, { get: { responses: Record<string, { content: Record<string, { schema: Schema }> }> } }>;
    };
    const answer = document.paths['/api/v1/apps/{app}/revenue']!.get.responses['200']!;
    const figures = answer.content['application/json']!.schema.properties;
    expect(figures.stars_from_bot!.description).toMatch(/source: the bot's successful-payment/);
    expect(figures.stars_from_mini_app!.description).toMatch(
      /source: the Mini App's purchase-success .*register-invoice/,
    );
    expect(figures.stars_refunded!.description).toMatch(/source: the bot's refunded-payment/);
  });

  it('is empty for a period without payment events, and refuses a key of nobody', async () => {
    expect(await shop.revenue(today, today)).toEqual({
      period: { from: today, to: today },
      currency: 'XTR',
      stars: 0,
      stars_paid: 0,
      stars_refunded: 0,
      stars_from_bot: 0,
      stars_from_mini_app: 0,
      payments: 0,
      payments_from_bot: 0,
      payments_from_mini_app: 0,
      refunds: 0,
      paying_users: 0,
      purchase_init: 0,
      purchase_success: 0,
      purchase_success_unpriced: 0,
      conversion: null,
      unverified: { stars: 0, payments: 0, purchase_success: 0, paying_users: 0 },
      days: [],
    });
    const refused = await fetch(`${service.url}/api/v1/apps/shop_app/revenue`);
    expect(refused.status).toBe(401);
  });
});

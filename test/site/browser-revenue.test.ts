// Server keys and revenue in Chromium: the owner makes a server key in the Analytics section (shown once) and gives
// the app its bot's id, the app's bot sends a /start with a campaign and a Stars payment with it, the Mini App (in a
// launch Telegram signed) that purchase and one more, a made-up buyer one more, and the dashboard's revenue card shows
// the Stars by source, the paying user and the purchase conversion, the made-up purchase apart and not added, and gives
// the Stars to the campaign of the /start.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAMMY_PACKAGE_NAME, SDK_PACKAGE_VERSION } from '../../src/sdk-serving/sdk-files.ts';
import { SESSION_COOKIE } from '../../src/site/session.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { create, PUBLIC_URL, startSiteApi } from './api-harness.ts';
import { chromiumAvailable, launchChromium, SITE_LAUNCHES, type SiteClient } from './site-harness.ts';

const APP = 'alice_stars';
const BUYER = 730001234;
const BOT_ID = 7_300_400_500;

describe.runIf(chromiumAvailable())('server keys and revenue in the browser', () => {
  let service: TestService;
  let alice: SiteClient;
  let browser: Browser;
  let token: string;

  beforeAll(async () => {
    ({ service, alice } = await startSiteApi());
    token = await create(alice, APP);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('a server key made on the site sends bot events; the revenue card counts the payment', async () => {
    const context = await browser.newContext({ baseURL: service.url });
    await context.addCookies([{ name: SESSION_COOKIE, value: alice.cookie!, url: service.url }]);
    const page = await context.newPage();
    const errors: Error[] = [];
    page.on('pageerror', (error) => errors.push(error));
    await page.goto('/analytics');
    await page.click(`.app-item[data-app="${APP}"] button[data-action="server-keys"]`);
    await page.click('#server-key-new');
    const key = (await page.locator('#server-key').textContent({ timeout: 10_000 }))!.trim();
    expect(key).toMatch(/^tma_server_[A-Za-z0-9_-]{32}$/);
    // with the grammY middleware's install line and its two lines for the app's own bot, the key filled in
    // naming the service's public address (PUBLIC_URL), as the bot's snippets do
    expect(await page.locator('#server-key-grammy-install').textContent()).toBe(
      `npm install ${PUBLIC_URL}/sdk/${GRAMMY_PACKAGE_NAME}-${SDK_PACKAGE_VERSION}.tgz`,
    );
    expect(await page.locator('#server-key-grammy').textContent()).toContain(
      `bot.use(analytics({ serverKey: '${key}', appName: '${APP}', endpoint: '${PUBLIC_URL}' }));`,
    );

    // the bot's events: no Origin, the server key; the mini app's: its token and domain
    const session = crypto.randomUUID();
    const fromBot = await postEvents(
      service.url,
      [
        makeEvent(APP, {
          event_name: 'bot-start',
          user_id: BUYER,
          session_id: session,
          start_param: 'spring',
          client_timestamp: String(Date.now() - 60_000),
        }),
        makeEvent(APP, {
          event_name: 'successful-payment',
          user_id: BUYER,
          session_id: session,
          client_timestamp: String(Date.now() - 30_000),
          custom_data: { amount: 250, currency: 'XTR', invoice_payload: 'gold' },
        }),
      ],
      { origin: null, headers: { authorization: `Bearer ${key}` } },
    );
    expect(fromBot.status, fromBot.text).toBe(201);
    // gold is the purchase the bot reported (counted once, from the bot); silver the Mini App's alone
    const invoice = (slug: string, amount: number) => ({
      event_name: 'register-invoice',
      slug,
      title: slug,
      description: slug,
      payload: slug,
      currency: 'XTR',
      prices: [{ label: slug, amount }],
    });
    // the app's bot's id, so that Telegram's signature on the buyer's launch checks
    expect((await alice.post(`/api/apps/${APP}/bot-id`, { bot_id: String(BOT_ID) })).json).toMatchObject({
      bot_id: String(BOT_ID),
    });
    const launch = crypto.randomUUID();
    const fromApp = await postEvents(
      service.url,
      [
        { init_data: SITE_LAUNCHES.sign({ botId: BOT_ID, user: { id: BUYER, first_name: 'Buyer' } }) },
        invoice('gold', 250),
        invoice('silver', 100),
        invoice('bronze', 10),
        ...['purchase-init', 'purchase-success'].map((name) => ({ event_name: name, slug: 'gold' })),
        ...['purchase-init', 'purchase-success'].map((name) => ({ event_name: name, slug: 'silver' })),
        { event_name: 'purchase-init', slug: 'bronze' },
      ].map((event) => makeEvent(APP, { user_id: BUYER, start_param: 'spring', session_id: launch, ...event })),
      { token, origin: 'https://alice-stars.example.com' },
    );
    expect(fromApp.status, fromApp.text).toBe(201);
    // anyone with the public token: a buyer Telegram never signed a launch of
    const madeUp = await postEvents(
      service.url,
      ['purchase-init', 'purchase-success'].map((name) =>
        makeEvent(APP, { user_id: 999_000_111, event_name: name, slug: 'silver' }),
      ),
      { token, origin: 'https://alice-stars.example.com' },
    );
    expect(madeUp.status, madeUp.text).toBe(201);

    await page.goto(`/analytics/${APP}`);
    const card = page.locator('#revenue');
    await expect.poll(() => card.locator('.kpis').textContent(), { timeout: 10_000 }).toContain('Stars (net)350');
    const figures = await card.locator('.kpis').textContent();
    expect(figures).toContain('Paying users1');
    expect(figures).toContain('Purchases started → paid3 → 2');
    expect(figures).toContain('Conversion66.7');
    expect(await card.locator('#revenue-sources').textContent()).toContain(
      'Stars paid: 250 confirmed by the bot · 100 reported by the Mini App in sessions Telegram signed',
    );
    expect(await card.locator('#revenue-unverified').textContent()).toContain(
      'Not counted: pages in sessions Telegram did not sign reported 1 purchase (100 Stars',
    );
    // a chart of Stars per day, and each day with a payment in a folded table
    await card.locator('#chart-revenue canvas').waitFor();
    expect(await card.locator('#chart-revenue .u-legend').textContent()).toContain('Stars');
    expect(await card.locator('#revenue-days table').textContent()).toContain('350250100');
    // the campaign that brought the buyer (their /start payload) gets the Stars they paid in the bot
    const ofCampaign = async (campaign: string) =>
      (await alice.get(`/api/apps/${APP}/insights?days=7&campaign=${campaign}`)).json.revenue;
    expect(await ofCampaign('spring')).toMatchObject({ stars: 350, paying_users: 1, purchase_success: 2 });
    expect(await ofCampaign('autumn')).toMatchObject({ stars: 0, paying_users: 0, purchase_init: 0 });
    expect(errors).toEqual([]);
    await context.close();
  });
});

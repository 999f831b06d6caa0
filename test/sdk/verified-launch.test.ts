// A launch Telegram signed, sent by the real SDK in Chromium under Telegram's telegram-web-app.js: the page opens with
// launch data signed as Telegram signs it (the test's own key pair, given as TELEGRAM_PUBLIC_KEY), our /index.js sends
// it once with its app-init, and the service counts the user as verified. The unchanged official client sends none:
// its launch counts as unverified ("no_proof"). init({ env: 'STG' }) has the launch checked with Telegram's test key,
// and counted apart ("test_environment"): signed, but by an environment whose accounts are made at will.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/tokens/registry.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { launchSigner } from '../helpers/telegram-launch.ts';
import {
  chromiumAvailable,
  launchChromium,
  launchHash,
  OFFICIAL_HOST,
  routeOfficialHost,
  requireOfficialScript,
  startPageServer,
  TEST_USER,
  waitForEvents,
  type PageServer,
} from './browser-harness.ts';
import { TELEGRAM_WEB_APP, until } from './real-client-page.ts';

declare const window: any;
declare const localStorage: any;

const enabled = chromiumAvailable();
if (enabled) requireOfficialScript();

const BOT_ID = 7_000_111_222;
const production = launchSigner();
const testEnvironment = launchSigner();

let service: TestService;
let pages: PageServer;
let browser: Browser;
let appCounter = 0;

beforeAll(async () => {
  if (!enabled) return;
  [service, pages, browser] = await Promise.all([
    startTestService({
      TELEGRAM_PUBLIC_KEY: production.publicKeyHex,
      TELEGRAM_TEST_PUBLIC_KEY: testEnvironment.publicKeyHex,
    }),
    startPageServer(),
    launchChromium(),
  ]);
}, 400_000);
afterAll(async () => {
  await browser?.close();
  await pages?.close();
  await service?.close();
});

/** the app's launches by outcome, and its verified users today */
async function launchChecks(appName: string) {
  const app = await service.services.registry.getApp(appName, OPERATOR);
  const rows = await service.store.sql.query<{ outcome: string; launches: number }>(
    'SELECT outcome, launches::int AS launches FROM daily_launch_checks WHERE app_id = $1',
    [app.appId],
  );
  const [verified] = await service.store.sql.query<{ users: number }>(
    'SELECT count(DISTINCT user_key)::int AS users FROM verified_sessions WHERE app_id = $1',
    [app.appId],
  );
  return {
    outcomes: Object.fromEntries(rows.map((row) => [row.outcome, row.launches])),
    verifiedUsers: verified!.users,
  };
}

/**
 * Opens a page of telegram-web-app.js and an analytics script (ours, or the official one routed to this service) as
 * Telegram opens a mini app, with the given signed launch data, and waits until its app-init is stored
 */
async function launch(client: 'ours' | 'official', initData: string, env?: 'STG') {
  const appName = `verified_${client}_${process.pid}_${++appCounter}`;
  const { token } = await service.services.registry.createApp(
    { appName, bot: '@verified_test_bot', botId: String(BOT_ID), domains: ['localhost'] },
    OPERATOR,
  );
  const script = client === 'ours' ? `${service.url}/index.js` : `https://${OFFICIAL_HOST}/index.js`;
  const base = `/${appName}`;
  pages.script(`${base}/telegram-web-app.js`, TELEGRAM_WEB_APP);
  const init = JSON.stringify({ token, appName, ...(env ? { env } : {}) });
  const url = pages.page(
    `${base}/index.html`,
    `<!doctype html><html><head><meta charset="utf-8"><title>${appName}</title>
<script src="${base}/telegram-web-app.js"></script>
<script async src="${script}" onload="window.telegramAnalytics.init(${init.replaceAll('"', '&quot;')})"></script>
</head><body>app</body></html>`,
  );
  const context = await browser.newContext();
  await routeOfficialHost(context, service.url);
  const page = await context.newPage();
  await page.goto(url + launchHash({ initData, platform: 'android' }), { waitUntil: 'domcontentloaded' });
  await until(page, 'Telegram.WebApp with the launch data', () => window.Telegram?.WebApp?.initData?.length > 0);
  await waitForEvents(service, appName, (events) => events.some((event) => event.event_name === 'app-init'), 60_000);
  if (client === 'ours')
    await until(
      page,
      'our outbox to be empty',
      (key) => localStorage.getItem(key) === '[]',
      `tma-analytics/queue:${appName}`,
    );
  await service.loaded();
  await context.close();
  return appName;
}

describe.runIf(enabled)('a launch Telegram signed, in Chromium', () => {
  it("our SDK sends telegram-web-app.js's initData once, and the user counts as verified", async () => {
    const initData = production.sign({ botId: BOT_ID, user: TEST_USER });
    const appName = await launch('ours', initData);
    expect(await launchChecks(appName)).toEqual({ outcomes: { verified: 1 }, verifiedUsers: 1 });
    // the launch data itself is nowhere in what was stored
    const rows = await service.store.sql.query<{ row: string }>(
      `SELECT row_to_json(e)::text AS row FROM events e JOIN apps a ON a.id = e.app_id WHERE a.app_name = $1`,
      [appName],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.row).not.toContain(TEST_USER.first_name);
    expect(rows[0]!.row).not.toContain('init_data');
  });

  it('the unchanged official client sends no launch data: its launch counts as unverified', async () => {
    const initData = production.sign({ botId: BOT_ID, user: TEST_USER });
    const appName = await launch('official', initData);
    expect(await launchChecks(appName)).toEqual({ outcomes: { no_proof: 1 }, verifiedUsers: 0 });
  });

  it("init({ env: 'STG' }) has the launch checked with Telegram's test key and counted apart; without it, that launch does not check", async () => {
    const stg = await launch('ours', testEnvironment.sign({ botId: BOT_ID, user: TEST_USER }), 'STG');
    expect(await launchChecks(stg)).toEqual({ outcomes: { test_environment: 1 }, verifiedUsers: 0 });
    const production = await launch('ours', testEnvironment.sign({ botId: BOT_ID, user: TEST_USER }));
    expect(await launchChecks(production)).toEqual({ outcomes: { bad_signature: 1 }, verifiedUsers: 0 });
  });
});

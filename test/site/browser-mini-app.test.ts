// The dashboard as a Mini App on a 390×844 phone, under Telegram's real telegram-web-app.js over a double of the
// native side: the app card's deep link opens that app's dashboard, Telegram's theme gives the colours (and follows a
// change), the page says ready and expands, BackButton goes back to the app list, no sign-out shows, the filter is
// folded and nothing scrolls the page sideways.
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TELEGRAM_WEB_APP_SCRIPT } from '../../src/site/page-shell.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { TELEGRAM_WEB_APP } from '../sdk/real-client-page.ts';
import { ALICE, create, domainOf, startSiteApi } from './api-harness.ts';
import { chromiumAvailable, horizontalOverflow, launchChromium, signedInitData } from './site-harness.ts';

declare const window: any;

const APP = 'alice_pocket';
const PHONE = { width: 390, height: 844 };
const DAY_MS = 86_400_000;
const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? path.resolve('test/artifacts/site');

/** Telegram's theme parameters as its Android app sends them (light, then dark) */
const LIGHT = {
  bg_color: '#ffffff',
  secondary_bg_color: '#efeff3',
  section_bg_color: '#ffffff',
  text_color: '#000000',
  hint_color: '#999999',
  link_color: '#2678b6',
  button_color: '#50a8eb',
  button_text_color: '#ffffff',
  section_separator_color: '#e7e7e7',
  destructive_text_color: '#cc2929',
};
const DARK = {
  bg_color: '#212d3b',
  secondary_bg_color: '#151e27',
  section_bg_color: '#1d2733',
  text_color: '#ffffff',
  hint_color: '#7d8b99',
  link_color: '#5eabe1',
  button_color: '#5288c1',
  button_text_color: '#ffffff',
  section_separator_color: '#0d1218',
  destructive_text_color: '#ec3942',
};

/** The native side: what the page posts to Telegram (event and data), kept across the Mini App's navigations */
const NATIVE_DOUBLE = `window.TelegramWebviewProxy = {
  postEvent(type, data) {
    const posted = JSON.parse(sessionStorage.getItem('posted') || '[]');
    posted.push([type, data]);
    sessionStorage.setItem('posted', JSON.stringify(posted));
  },
};`;

const rgb = (hex: string) => `rgb(${[1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16)).join(', ')})`;

/** the last BackButton setting the page posted */
async function backButton(page: Page): Promise<boolean | undefined> {
  const posted: [string, string][] = await page.evaluate(() => JSON.parse(sessionStorage.getItem('posted') || '[]'));
  const setups = posted.filter(([type]) => type === 'web_app_setup_back_button');
  return setups.length === 0 ? undefined : JSON.parse(setups.at(-1)![1]).is_visible;
}

describe.runIf(chromiumAvailable())('the dashboard as a Mini App', () => {
  let service: TestService;
  let browser: Browser;
  let context: BrowserContext;

  beforeAll(async () => {
    const site = await startSiteApi();
    service = site.service;
    const token = await create(site.alice, APP);
    // two weeks of launches from several platforms, campaigns and custom events: wide tables
    const events = Array.from({ length: 14 * 6 }, (_, index) =>
      makeEvent(APP, {
        event_name: index % 3 === 0 ? 'custom-event' : 'app-init',
        custom_data: index % 3 === 0 ? { name: `level_${index % 4}`, stars: index } : undefined,
        user_id: 7000 + (index % 23),
        platform: ['android', 'ios', 'tdesktop', 'weba'][index % 4],
        locale: ['en', 'ru', 'es'][index % 3],
        start_param: ['ads_autumn_campaign_2026', 'friend_referral', ''][index % 3],
        client_timestamp: String(Date.now() - Math.floor(index / 6) * DAY_MS - 60_000),
      }),
    );
    expect((await postEvents(service.url, events, { token, origin: `https://${domainOf(APP)}` })).status).toBe(201);
    await service.loaded();
    browser = await launchChromium();
    context = await browser.newContext({ baseURL: service.url, viewport: PHONE, isMobile: true, hasTouch: true });
    await context.addInitScript(NATIVE_DOUBLE);
    await context.route(TELEGRAM_WEB_APP_SCRIPT, (route) =>
      route.fulfill({ contentType: 'application/javascript', path: TELEGRAM_WEB_APP }),
    );
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await service?.close();
  });

  it("opens the app's dashboard from its deep link in Telegram's colours, ready, with a BackButton and no sign-out", async () => {
    const page = await context.newPage();
    const errors: Error[] = [];
    page.on('pageerror', (error) => errors.push(error));
    const launch = new URLSearchParams({
      tgWebAppData: signedInitData(ALICE),
      tgWebAppVersion: '8.0',
      tgWebAppPlatform: 'android',
      tgWebAppThemeParams: JSON.stringify(LIGHT),
    });
    await page.goto(`/webapp?app=${APP}#${launch}`);
    await page.waitForURL(`**/analytics/${APP}`);
    await page.locator('#overview button.pick').first().waitFor();
    await page.locator('table.cohorts').waitFor();

    const colours = () =>
      page.evaluate(() => ({
        page: getComputedStyle(document.body).backgroundColor,
        card: getComputedStyle(document.querySelector('.card')!).backgroundColor,
        text: getComputedStyle(document.body).color,
        button: getComputedStyle(document.querySelector('#filters button[type=submit]')!).backgroundColor,
      }));
    expect(await colours()).toEqual({
      page: rgb(LIGHT.secondary_bg_color),
      card: rgb(LIGHT.section_bg_color),
      text: rgb(LIGHT.text_color),
      button: rgb(LIGHT.button_color),
    });
    const posted: [string, string][] = await page.evaluate(() => JSON.parse(sessionStorage.getItem('posted')!));
    expect(posted.map(([type]) => type)).toEqual(expect.arrayContaining(['web_app_ready', 'web_app_expand']));
    expect(await backButton(page)).toBe(true);
    expect(await page.locator('header').textContent()).not.toContain('Sign out');

    // laid out for the phone: the filter folded, nothing wider than the screen
    expect(await page.locator('#filter-panel').getAttribute('open')).toBeNull();
    expect(await horizontalOverflow(page)).toMatchObject({ page: PHONE.width, wide: [] });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(SCREENSHOTS, 'first-screen-phone-light.png') });

    // Telegram switches to its dark theme: the page follows
    await page.evaluate(
      (theme) => window.Telegram.WebView.receiveEvent('theme_changed', { theme_params: theme }),
      DARK,
    );
    await expect.poll(colours).toEqual({
      page: rgb(DARK.secondary_bg_color),
      card: rgb(DARK.section_bg_color),
      text: rgb(DARK.text_color),
      button: rgb(DARK.button_color),
    });
    expect(await page.evaluate(() => document.documentElement.dataset.scheme)).toBe('dark');
    // the charts draw in the new colours when the page draws again
    await page.reload();
    await page.locator('#overview button.pick').first().waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'first-screen-phone-dark.png') });

    // BackButton: back to the app list, which has no BackButton
    await page.evaluate(() => window.Telegram.WebView.receiveEvent('back_button_pressed'));
    await page.waitForURL(/\/analytics$/);
    await page.locator(`.app-item[data-app="${APP}"]`).waitFor();
    expect(await backButton(page)).toBe(false);
    expect(await horizontalOverflow(page)).toMatchObject({ wide: [] });
    expect(errors).toEqual([]);
    await page.close();
  });
});

// Today is still under way, and the dashboard says so in Chromium: the daily charts draw today apart ("today, so far",
// dashed), the day's KPI says "so far", and a retention cell that falls on today is pending ("…"), never a percentage.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/site/session.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { create, domainOf, startSiteApi } from './api-harness.ts';
import { chromiumAvailable, launchChromium, type SiteClient } from './site-harness.ts';

const APP = 'alice_today';
const DAY_MS = 86_400_000;

describe.runIf(chromiumAvailable())("today's partial numbers in the browser", () => {
  let service: TestService;
  let alice: SiteClient;
  let browser: Browser;

  beforeAll(async () => {
    ({ service, alice } = await startSiteApi());
    const token = await create(alice, APP);
    // users first seen yesterday, half of them back today: yesterday's cohort's D1 falls on today
    const noonYesterday = Date.parse(`${new Date(Date.now() - DAY_MS).toISOString().slice(0, 10)}T12:00:00Z`);
    const events = [1, 2, 3, 4].flatMap((user) => [
      makeEvent(APP, { user_id: user, client_timestamp: String(noonYesterday) }),
      ...(user <= 2 ? [makeEvent(APP, { user_id: user, client_timestamp: String(Date.now() - 1_000) })] : []),
    ]);
    expect((await postEvents(service.url, events, { token, origin: `https://${domainOf(APP)}` })).status).toBe(201);
    await service.loaded();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('draws today apart, says "so far", and shows a retention cell on today as pending', async () => {
    const context = await browser.newContext({ baseURL: service.url });
    await context.addCookies([{ name: SESSION_COOKIE, value: alice.cookie!, url: service.url }]);
    const page = await context.newPage();
    await page.goto(`/analytics/${APP}?days=7`);
    await page.waitForSelector('#chart-users canvas');
    expect(await page.locator('#chart-users .u-legend').textContent()).toContain('Users (today, so far)');
    expect(await page.locator('.kpis').first().textContent()).toContain('Events today, so far');
    const cohort = page.locator('table.cohorts tr').nth(1);
    await expect.poll(() => cohort.locator('td').nth(2).textContent()).toBe('…');
    expect(await cohort.locator('td').nth(2).getAttribute('title')).toBe('today: still growing');
    await context.close();
  });
});

// The dashboard's first screen in Chromium at 1440×900: the overview's figures and their changes equal the read API's
// for the same two periods (today left out of the change), one chart follows the figure picked, the contents reach
// every part of the page; an app with no event shows what to set up and turns into the dashboard when one arrives.
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/site/session.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { create, domainOf, PUBLIC_URL, startSiteApi } from './api-harness.ts';
import { chromiumAvailable, launchChromium, type SiteClient } from './site-harness.ts';

const APP = 'alice_overview';
const EMPTY = 'alice_first';
const DAY_MS = 86_400_000;
const DESKTOP = { width: 1440, height: 900 };
const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? path.resolve('test/artifacts/site');

const dayString = (ago: number) => new Date(Date.now() - ago * DAY_MS).toISOString().slice(0, 10);
const noonOf = (ago: number) => String(Date.parse(`${dayString(ago)}T12:00:00Z`));

/**
 * Two weeks: the week before (days 13..7 ago) with users 1..6, this week (6..1 ago) with users 4..12 and two
 * sessions a day, and today. Users come back a day later, so D1 is no share of zero.
 */
function twoWeeks(): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = [];
  const visit = (user: number, ago: number) =>
    events.push(makeEvent(APP, { user_id: user, client_timestamp: noonOf(ago), session_id: crypto.randomUUID() }));
  for (let user = 1; user <= 6; user++) {
    visit(user, 13 - (user % 4));
    if (user % 2 === 0) visit(user, 12 - (user % 4));
  }
  for (let user = 4; user <= 12; user++) {
    visit(user, 6 - (user % 5));
    visit(user, 5 - (user % 5));
  }
  for (let user = 11; user <= 14; user++)
    events.push(makeEvent(APP, { user_id: user, client_timestamp: String(Date.now() - 1_000) }));
  // today's custom events of user 11, in the launch's session
  for (const level of [1, 2, 2])
    events.push(
      makeEvent(APP, {
        event_name: 'custom-event',
        user_id: 11,
        session_id: events.at(-4)!.session_id,
        custom_data: { name: 'level_up', level, mode: 'solo' },
        client_timestamp: String(Date.now() - 500 + level),
      }),
    );
  return events;
}

interface Figure {
  value: string;
  change: string;
}

async function figures(page: Page): Promise<Record<string, Figure>> {
  return page.evaluate(() =>
    Object.fromEntries(
      [...document.querySelectorAll('#overview button.pick')].map((button: any) => [
        button.dataset.key,
        { value: button.querySelector('.value').textContent, change: button.querySelector('.change').textContent },
      ]),
    ),
  );
}

const num = (value: number) => value.toLocaleString('en-US');
const percent = (value: number) => `${(value * 100).toFixed(1)}%`;

/** the change as the overview writes it, from the two figures the read API gives */
function changeText(compared: number, previous: number): string {
  if (previous === 0) return 'no change to show';
  const change = (compared - previous) / previous;
  const arrow = change > 0 ? '▲ +' : change < 0 ? '▼ −' : '';
  return `${arrow}${Math.abs(change * 100).toFixed(1)}% ${num(compared)} vs ${num(previous)}`;
}

/** day 1's retention over the cohorts whose day 1 is over, from the read API's cohorts (written out here) */
function dayOneRetention(cohorts: { users: number; retained: number[]; complete: number }[]): number | null {
  const followed = cohorts.filter((cohort) => cohort.retained.length > 1 && cohort.complete > 1);
  const users = followed.reduce((sum, cohort) => sum + cohort.users, 0);
  return users === 0 ? null : followed.reduce((sum, cohort) => sum + cohort.retained[1]!, 0) / users;
}

/** what went wrong in each page's scripts */
const errorsOf = new WeakMap<Page, Error[]>();

describe.runIf(chromiumAvailable())('the first screen in the browser', () => {
  let service: TestService;
  let alice: SiteClient;
  let browser: Browser;
  let readKey: string;

  const readApi = async (route: string, from: string, to: string) =>
    (await (
      await fetch(`${service.url}/api/v1/apps/${APP}/${route}?from=${from}&to=${to}`, {
        headers: { authorization: `Bearer ${readKey}` },
      })
    ).json()) as any;

  async function dashboardPage(app: string): Promise<Page> {
    const context = await browser.newContext({ baseURL: service.url, viewport: DESKTOP });
    await context.addCookies([{ name: SESSION_COOKIE, value: alice.cookie!, url: service.url }]);
    const page = await context.newPage();
    const errors: Error[] = [];
    page.on('pageerror', (error) => errors.push(error));
    errorsOf.set(page, errors);
    await page.goto(`/analytics/${app}?days=7`);
    return page;
  }

  beforeAll(async () => {
    ({ service, alice } = await startSiteApi());
    const token = await create(alice, APP);
    const sent = await postEvents(service.url, twoWeeks(), { token, origin: `https://${domainOf(APP)}` });
    expect(sent.status).toBe(201);
    await service.loaded();
    ({ key: readKey } = await service.services.readKeys.create(APP, { surface: 'cli', isAdmin: true }));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('shows each figure over the period and its change on the complete days, as the read API counts them', async () => {
    const page = await dashboardPage(APP);
    await page.locator('#overview button.pick').first().waitFor();
    const shown = await figures(page);
    const [whole, compared, previous] = await Promise.all([
      readApi('summary', dayString(6), dayString(0)),
      readApi('summary', dayString(6), dayString(1)),
      readApi('summary', dayString(12), dayString(7)),
    ]);
    expect(Object.keys(shown)).toEqual(['users', 'new_users', 'sessions', 'd1', 'd7']); // no revenue: none was paid
    for (const key of ['users', 'new_users', 'sessions'] as const) {
      expect(shown[key]!.value, key).toBe(num(whole[key]));
      expect(shown[key]!.change, key).toBe(changeText(compared[key], previous[key]));
    }
    // today's four users count in the figure, not in the change
    expect(whole.users).toBe(compared.users + 2); // users 13 and 14 are new today; 11 and 12 came before
    expect(shown.users!.change).toMatch(/^▲ \+/);
    const [cohorts, cohortsBefore] = await Promise.all([
      readApi('retention', dayString(6), dayString(0)),
      readApi('retention', dayString(12), dayString(7)),
    ]);
    const [d1, d1Before] = [dayOneRetention(cohorts.cohorts)!, dayOneRetention(cohortsBefore.cohorts)!];
    expect(shown.d1!.value).toBe(percent(d1));
    const points = (d1 - d1Before) * 100;
    expect(shown.d1!.change).toBe(
      `${points > 0 ? '▲ +' : points < 0 ? '▼ −' : ''}${Math.abs(points).toFixed(1)} pp ${percent(d1)} vs ${percent(d1Before)}`,
    );
    expect(await page.locator('#overview-periods').textContent()).toContain('today, still under way, is left out');

    // the cohort grid is a heat scale: a cell where more of the cohort came back is stronger
    await page.locator('table.cohorts').waitFor();
    const heat = await page
      .locator('table.cohorts td.heat')
      .evaluateAll((cells: any[]) => cells.map((cell) => [cell.textContent, getComputedStyle(cell).backgroundColor]));
    const full = heat.find(([text]) => text === '100.0%');
    const none = heat.find(([text]) => text === '0.0%');
    expect(full && none).toBeTruthy();
    expect(full![1]).not.toBe(none![1]);
    expect(none![1]).toMatch(/\/ 0\)$|^rgba\(0, 0, 0, 0\)$/); // no colour at all

    // one chart, of the figure picked
    expect(await page.locator('#chart-overview .u-legend').textContent()).toContain('Active users');
    await page.click('#overview button.pick[data-key="new_users"]');
    await expect.poll(() => page.locator('#chart-overview .u-legend').textContent()).toContain('New users');
    expect(await page.locator('#overview button.pick[data-key="new_users"]').getAttribute('aria-pressed')).toBe('true');

    // the contents name every part and each link reaches it
    const links = await page
      .locator('#sections a')
      .evaluateAll((anchors: any[]) =>
        anchors.map((a) => [a.textContent, Boolean(document.querySelector(a.getAttribute('href')))]),
      );
    expect(links.map(([name]) => name)).toEqual([
      'Overview',
      'Launches',
      'Traffic',
      'Wallet funnel',
      'Events',
      'Audience',
      'Retention',
      'Funnels',
      'Custom events',
      'Campaigns',
      'Revenue',
      'Live',
      'Settings',
    ]);
    expect(links.every(([, found]) => found)).toBe(true);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: path.join(SCREENSHOTS, 'first-screen-desktop.png') });
    expect(errorsOf.get(page)).toEqual([]);
    await page.context().close();
  });

  it("offers the names seen: filter values, each custom event's properties, funnel steps", async () => {
    const page = await dashboardPage(APP);
    await page.locator('#custom-events table').waitFor();
    expect(
      await page.locator('#platform-values option').evaluateAll((options: any[]) => options.map((o) => o.value)),
    ).toEqual(['tdesktop']);
    // a property's button shows its values
    const properties = page.locator('#custom-events .custom-property');
    expect(await properties.allTextContents()).toEqual(['level', 'mode']);
    await properties.first().click();
    await expect
      .poll(() => page.locator('#property-values tr').allTextContents())
      .toEqual(['levelEventsShare', '2266.7%', '1133.3%']);
    // funnel steps are picked from the names seen, custom events by their name
    const offered = await page
      .locator('#add-step option')
      .evaluateAll((options: any[]) => options.map((o) => o.value).filter(Boolean));
    expect(offered).toEqual(['app-init', 'level_up']);
    await page.fill('#funnel-form input[name=steps]', 'app-init');
    await page.selectOption('#add-step', 'level_up');
    expect(await page.inputValue('#funnel-form input[name=steps]')).toBe('app-init,level_up');
    await page.click('#funnel-form button[type=submit]');
    await expect.poll(() => page.locator('#funnel-steps tr').count()).toBe(3);
    expect(errorsOf.get(page)).toEqual([]);
    await page.context().close();
  });

  it('shows an app without events what to set up, then turns into the dashboard when its first event arrives', async () => {
    const token = await create(alice, EMPTY);
    const page = await dashboardPage(EMPTY);
    const waiting = page.locator('#first-event');
    await waiting.waitFor();
    const text = await waiting.textContent();
    expect(text).toContain(`Waiting for the first event of ${EMPTY}`);
    expect(text).toContain(domainOf(EMPTY));
    // the snippet to paste names the service's public address and the app, with a copy button
    expect(await waiting.locator('pre').textContent()).toBe(
      `<script async src="${PUBLIC_URL}/index.js"\n  onload="telegramAnalytics.init({ token: 'YOUR_TOKEN', appName: '${EMPTY}' })"></script>`,
    );
    expect(await waiting.locator('button[data-copy]').count()).toBe(1);
    expect(await page.locator('#insights').isHidden()).toBe(true);
    expect(await page.locator('.kpi').count()).toBe(0); // no page of zeros
    // nothing to filter or jump to yet
    expect(await page.locator('#filter-panel').isHidden()).toBe(true);
    expect(await page.locator('#sections').isHidden()).toBe(true);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'first-event-desktop.png') });

    const sent = await postEvents(service.url, [makeEvent(EMPTY, { user_id: 77 })], {
      token,
      origin: `https://${domainOf(EMPTY)}`,
    });
    expect(sent.status).toBe(201);
    await page.locator('#overview button.pick').first().waitFor({ timeout: 30_000 });
    expect(await waiting.count()).toBe(0);
    expect((await figures(page)).users!.value).toBe('1');
    expect(await page.locator('#insights').isHidden()).toBe(false);
    expect(await page.locator('#filter-panel').isHidden()).toBe(false);
    expect(errorsOf.get(page)).toEqual([]);
    await page.context().close();
  });
});

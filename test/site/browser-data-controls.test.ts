// The app page's data controls card in Chromium: the owner sets the retention and erases a user (each asked first),
// and sees the result; another user's page shows no card.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { create, startSiteApi } from './api-harness.ts';
import { chromiumAvailable, launchChromium, type SiteClient } from './site-harness.ts';
import { SESSION_COOKIE } from '../../src/site/session.ts';

const ERASED_USER = 660000111;

describe.runIf(chromiumAvailable())('data controls card', () => {
  let service: TestService;
  let alice: SiteClient;
  let bob: SiteClient;
  let browser: Browser;

  beforeAll(async () => {
    ({ service, alice, bob } = await startSiteApi());
    const token = await create(alice, 'alice_card');
    const sent = [makeEvent('alice_card', { user_id: ERASED_USER }), makeEvent('alice_card', { user_id: 5 })];
    expect((await postEvents(service.url, sent, { token, origin: 'https://alice-card.example.com' })).status).toBe(201);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  /** the app page as the client's signed-in user sees it; every question is answered yes and recorded */
  async function appPage(client: SiteClient): Promise<{ page: Page; asked: string[]; errors: Error[] }> {
    const context = await browser.newContext({ baseURL: service.url });
    await context.addCookies([{ name: SESSION_COOKIE, value: client.cookie!, url: service.url }]);
    const page = await context.newPage();
    const asked: string[] = [];
    const errors: Error[] = [];
    page.on('dialog', (dialog) => {
      asked.push(dialog.message());
      void dialog.accept();
    });
    page.on('pageerror', (error) => errors.push(error));
    await page.goto('/analytics/alice_card');
    return { page, asked, errors };
  }

  it('sets the retention and erases a user after asking, and shows what was done', async () => {
    const { page, asked, errors } = await appPage(alice);
    const card = page.locator('#data-controls');
    await expect.poll(() => card.isVisible()).toBe(true);
    expect(await card.locator('select[name="days"]').inputValue()).toBe('forever');

    await card.locator('select[name="days"]').selectOption('90');
    await card.getByRole('button', { name: 'Save retention' }).click();
    await expect.poll(() => card.locator('#retention-done').textContent()).toBe('Events are kept for 90 days.');
    expect(asked).toEqual(['Delete the events of alice_card older than 90 days? This cannot be undone.']);
    expect((await service.store.prisma.app.findUniqueOrThrow({ where: { appName: 'alice_card' } })).retentionDays).toBe(
      90,
    );

    await card.locator('input[name="telegram_user_id"]').fill(String(ERASED_USER));
    await card.getByRole('button', { name: 'Erase this user’s data' }).click();
    await expect
      .poll(() => card.locator('#erase-done').textContent())
      .toMatch(
        /^Erased the user \(reference in the audit log: [A-Za-z0-9_-]{12}\): 1 event, 1 session, 1 active day\.$/,
      );
    // keeping more deletes nothing: not asked
    await card.locator('select[name="days"]').selectOption('365');
    await card.getByRole('button', { name: 'Save retention' }).click();
    await expect.poll(() => card.locator('#retention-done').textContent()).toBe('Events are kept for 1 year.');
    expect(asked[1]).toBe('Erase every event and per-user row of this user from alice_card? This cannot be undone.');
    expect(asked).toHaveLength(2);
    expect(await card.locator('input[name="telegram_user_id"]').inputValue()).toBe('');
    expect(errors).toEqual([]);
  });

  it("shows no card on another user's app page", async () => {
    const { page, errors } = await appPage(bob);
    await page.waitForLoadState('networkidle');
    expect(await page.locator('#data-controls').isVisible()).toBe(false);
    expect(errors).toEqual([]);
  });
});

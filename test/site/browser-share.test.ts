// The public link and the alerts card in Chromium: the owner makes a link on the app page and saves alert settings;
// a visitor without a session opens the link and sees the dashboard's numbers, without refusals, events, export or
// insights; a revoked link shows a plain "not found" page.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/site/session.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { create, startSiteApi } from './api-harness.ts';
import { chromiumAvailable, launchChromium, type SiteClient } from './site-harness.ts';

describe.runIf(chromiumAvailable())('public link and alerts in the browser', () => {
  let service: TestService;
  let alice: SiteClient;
  let browser: Browser;

  beforeAll(async () => {
    ({ service, alice } = await startSiteApi());
    const token = await create(alice, 'alice_public');
    const sent = [makeEvent('alice_public', { event_name: 'app-init' }), makeEvent('alice_public')];
    expect((await postEvents(service.url, sent, { token, origin: 'https://alice-public.example.com' })).status).toBe(
      201,
    );
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('the owner makes a link and saves alerts; a visitor sees the numbers only; a revoked link shows nothing', async () => {
    const owner = await browser.newContext({ baseURL: service.url });
    await owner.addCookies([{ name: SESSION_COOKIE, value: alice.cookie!, url: service.url }]);
    const page = await owner.newPage();
    const errors: Error[] = [];
    page.on('pageerror', (error) => errors.push(error));
    page.on('dialog', (dialog) => void dialog.accept());
    await page.goto('/analytics/alice_public');

    const alerts = page.locator('#alerts');
    await expect.poll(() => alerts.isVisible()).toBe(true);
    await alerts.locator('select[name="silence_hours"]').selectOption('24');
    await alerts.locator('input[name="digest"]').check();
    await alerts.getByRole('button', { name: 'Save alerts' }).click();
    await expect.poll(() => alerts.locator('[role="status"]').textContent()).toBe('Saved.');
    expect((await alice.get('/api/apps/alice_public/alerts')).json).toMatchObject({ silence_hours: 24, digest: true });

    const share = page.locator('#share');
    await expect.poll(() => share.isVisible()).toBe(true);
    await share.getByRole('button', { name: 'Make a link' }).click();
    await expect.poll(() => share.locator('#share-url').isVisible()).toBe(true);
    const url = (await share.locator('#share-url').textContent())!;
    expect(url).toMatch(/\/share\/tma_share_[A-Za-z0-9_-]{32}$/);

    const visitor = await browser.newContext();
    const shared = await visitor.newPage();
    const visitorErrors: Error[] = [];
    shared.on('pageerror', (error) => visitorErrors.push(error));
    await shared.goto(service.url + new URL(url).pathname);
    await expect.poll(() => shared.locator('.kpis').textContent()).toContain('Events2');
    expect(await shared.locator('#export-csv').count()).toBe(0);
    expect(await shared.getByText('Rejected requests').count()).toBe(0);
    expect(await shared.getByText('Recent events').count()).toBe(0);
    expect(visitorErrors).toEqual([]);

    await share.getByRole('button', { name: 'Revoke the link' }).click();
    await expect.poll(() => share.textContent()).toContain('No link yet.');
    await shared.reload();
    expect(await shared.locator('h1').textContent()).toBe('Link not found');
    expect(errors).toEqual([]);
  });
});

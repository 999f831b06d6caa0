// The team in Chromium: the owner opens the team of an app, makes an invite link and sees the member it brought; the
// viewer sees the app with their role and only the dashboard and "Leave", their alerts but not the data controls,
// and leaves.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SESSION_COOKIE } from '../../src/site/session.ts';
import type { TestService } from '../helpers/service.ts';
import { ALICE, create, startSiteApi } from './api-harness.ts';
import { chromiumAvailable, launchChromium, SiteClient, type TelegramUser } from './site-harness.ts';

const APP = 'alice_team';
const CAROL: TelegramUser = { id: 3003, first_name: 'Carol', username: 'carol' };

describe.runIf(chromiumAvailable())('the team in the browser', () => {
  let service: TestService;
  let alice: SiteClient;
  let carol: SiteClient;
  let browser: Browser;
  const errors: Error[] = [];

  beforeAll(async () => {
    ({ service, alice } = await startSiteApi());
    carol = await SiteClient.signedIn(service.url, CAROL);
    await create(alice, APP);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  async function pageOf(client: SiteClient): Promise<Page> {
    const context = await browser.newContext({ baseURL: service.url });
    await context.addCookies([{ name: SESSION_COOKIE, value: client.cookie!, url: service.url }]);
    const page = await context.newPage();
    page.on('pageerror', (error) => errors.push(error));
    page.on('dialog', (dialog) => dialog.accept());
    await page.goto('/analytics');
    return page;
  }

  it('invites a viewer from the team, who sees only what viewers may and can leave', async () => {
    const owner = await pageOf(alice);
    const item = owner.locator(`.app-item[data-app="${APP}"]`);
    await item.locator('button[data-action="team"]').click();
    await item.locator('button[data-action="invite"][data-role="viewer"]').click();
    const start = (await item.locator('.invite pre').textContent({ timeout: 10_000 }))!.trim();
    const code = /join_([A-Za-z0-9_-]{22})$/.exec(start)?.[1];
    expect(code, start).toBeDefined();
    await service.services.members.acceptInvite(code!, String(CAROL.id), CAROL.first_name);
    await item.locator('button[data-action="team"]').click();
    await expect.poll(() => item.locator('.team').textContent()).toContain('Carol');

    const viewer = await pageOf(carol);
    const shared = viewer.locator(`.app-item[data-app="${APP}"]`);
    await shared.waitFor();
    expect(await shared.locator('.chip', { hasText: 'viewer' }).count()).toBe(1);
    expect(
      await shared.locator('button[data-action]').evaluateAll((buttons) => buttons.map((b) => b.dataset.action)),
    ).toEqual(['leave']);
    // the dashboard and their alerts, without the owner's data controls
    await viewer.goto(`/analytics/${APP}`);
    await viewer.locator('#alerts').waitFor({ state: 'visible', timeout: 10_000 });
    expect(await viewer.locator('#data-controls').isHidden()).toBe(true);
    await viewer.goto('/analytics');
    await shared.locator('button[data-action="leave"]').click();
    await expect.poll(() => viewer.locator(`.app-item[data-app="${APP}"]`).count()).toBe(0);
    const { members } = await service.services.members.list(APP, { surface: 'site', telegramId: String(ALICE.id) });
    expect(members.map((member) => member.role)).toEqual(['owner']);
    expect(errors).toEqual([]);
  });
});

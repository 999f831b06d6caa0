// The public read-only link of a dashboard: the owner makes, replaces and revokes it; anyone with it sees the
// dashboard's numbers without signing in and nothing else (no token, domains, refusals, events or other routes);
// a replaced or revoked link shows nothing; nobody but the owner manages it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { create, PUBLIC_URL, startSiteApi } from './api-harness.ts';
import { SiteClient } from './site-harness.ts';

let service: TestService;
let alice: SiteClient;
let bob: SiteClient;
let anyone: SiteClient;

const APP = 'shared_app';
const path = `/api/apps/${APP}/share`;

beforeAll(async () => {
  ({ service, alice, bob } = await startSiteApi());
  anyone = new SiteClient(service.url);
  const token = await create(alice, APP);
  const event = makeEvent(APP, { event_name: 'app-init' });
  expect((await postEvents(service.url, event, { token, origin: 'https://shared-app.example.com' })).status).toBe(201);
  expect((await postEvents(service.url, event, { token, origin: 'https://elsewhere.example' })).status).toBe(403);
});
afterAll(() => service?.close());

/** the link's secret, from the URL the owner is given once */
function secretOf(url: string): string {
  expect(url).toMatch(new RegExp(`^${PUBLIC_URL}/share/tma_share_[A-Za-z0-9_-]{32}$`));
  return url.slice(url.lastIndexOf('/') + 1);
}

/** the app's public link actions in the audit log, oldest first */
async function shareAudit(): Promise<string[]> {
  const audit = await service.store.prisma.auditLog.findMany({
    where: { appName: APP, action: { startsWith: 'share_link.' } },
    orderBy: { id: 'asc' },
  });
  return audit.map((entry) => entry.action);
}

describe('public dashboard link', () => {
  it('shows the numbers to anyone with the link, and nothing else', async () => {
    expect((await alice.get(path)).json).toEqual({ link: null });
    const made = await alice.post(path);
    expect(made.status, made.text).toBe(201);
    const secret = secretOf(made.json.url);
    expect(made.json.link.prefix).toBe(secret.slice(0, 'tma_share_'.length + 6));
    expect((await alice.get(path)).json.link.prefix).toBe(made.json.link.prefix);

    const dashboard = await anyone.get(`/api/share/${secret}/dashboard?days=7`);
    expect(dashboard.status, dashboard.text).toBe(200);
    expect(dashboard.json.totals.events).toBe(1);
    expect(dashboard.json.app).toEqual({ app_name: APP, last_event_at: expect.any(String) });
    expect(dashboard.json.rejections).toEqual([]);
    expect(dashboard.text).not.toContain('elsewhere.example');
    expect(dashboard.text).not.toContain('tma_');
    const page = await anyone.get(`/share/${secret}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain(`data-api="/api/share/${secret}"`);
    expect(page.text).not.toContain('export-csv');

    // the link opens nothing but its dashboard
    expect((await anyone.get(`/api/share/${secret}/recent?days=7`)).status).toBe(404);
    expect((await anyone.get(`/api/apps/${APP}/dashboard?days=7`)).status).toBe(401);
    expect((await anyone.get(`/api/share/${secret}/dashboard?days=5`)).status).toBe(400);
    // the secret with its last character changed (to another one whatever it was)
    const altered = `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    for (const wrong of ['tma_share_x', altered, 'not-a-link'])
      expect((await anyone.get(`/api/share/${wrong}/dashboard`)).status).toBe(404);
  });

  it('a new link replaces the old one; a revoked link shows nothing', async () => {
    // the actions this test takes, after whatever the others did
    const auditBefore = (await shareAudit()).length;
    const first = secretOf((await alice.post(path)).json.url);
    const second = secretOf((await alice.post(path)).json.url);
    expect((await anyone.get(`/api/share/${first}/dashboard`)).status).toBe(404);
    expect((await anyone.get(`/share/${first}`)).status).toBe(404);
    expect((await anyone.get(`/api/share/${second}/dashboard`)).status).toBe(200);

    expect((await alice.delete(path)).status).toBe(204);
    expect((await anyone.get(`/api/share/${second}/dashboard`)).status).toBe(404);
    expect((await anyone.get(`/share/${second}`)).text).toContain('does not exist or was revoked');
    expect((await alice.get(path)).json).toEqual({ link: null });
    expect((await alice.delete(path)).json).toEqual({ message: 'This app has no public link.' });
    expect((await shareAudit()).slice(auditBefore)).toEqual([
      'share_link.create',
      'share_link.create',
      'share_link.revoke',
    ]);
  });

  it('answers another user as if the app did not exist', async () => {
    expect((await bob.get(path)).status).toBe(404);
    expect((await bob.post(path)).status).toBe(404);
    expect((await bob.delete(path)).status).toBe(404);
    expect((await anyone.post(path)).status).toBe(401);
  });
});

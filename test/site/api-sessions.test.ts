// Site sessions that really end: sign-out by a same-origin POST only, a saved cookie dead afterwards, and
// every session of a user ended by an administrator on the site or by the operator with the CLI.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../src/cli/commands.ts';
import type { TestService } from '../helpers/service.ts';
import { startSiteApi } from './api-harness.ts';
import { eventually, signedInitData, SiteClient } from './site-harness.ts';

let service: TestService;
let alice: SiteClient;
let admin: SiteClient;

beforeAll(async () => {
  ({ service, alice, admin } = await startSiteApi());
});
afterAll(() => service?.close());

describe('sessions that really end', () => {
  /** a second browser holding a copy of the first one's session cookie */
  function copyOf(client: SiteClient): SiteClient {
    const copy = new SiteClient(service.url);
    copy.cookie = client.cookie;
    return copy;
  }

  it('ends the session on sign-out: a saved copy of the cookie no longer works anywhere', async () => {
    const erin = await SiteClient.signedIn(service.url, { id: 5005, first_name: 'Erin' });
    const saved = copyOf(erin);
    expect((await saved.get('/api/me')).status).toBe(200);
    const out = await erin.request('POST', '/logout', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(out.status).toBe(303);
    expect((await saved.get('/api/me')).status).toBe(401);
    expect((await saved.get('/analytics')).status).toBe(302);
    // signing in again gives a new, working session
    const again = await SiteClient.signedIn(service.url, { id: 5005, first_name: 'Erin' });
    expect((await again.get('/api/me')).status).toBe(200);
    expect((await saved.get('/api/me')).status).toBe(401);
  });

  it("signs out by a same-origin POST only: a link or another site's form leaves the session alive", async () => {
    const frank = await SiteClient.signedIn(service.url, { id: 5006, first_name: 'Frank' });
    const page = await frank.get('/logout');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<form method="post" action="/logout">');
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await frank.request('POST', '/logout', { headers: form, origin: 'https://evil.example' })).status).toBe(
      403,
    );
    expect((await frank.request('POST', '/logout', { headers: form, origin: null })).status).toBe(403);
    expect((await frank.get('/api/me')).status).toBe(200);
    expect(frank.cookie).toBeDefined();
    // the page's own fetch (JSON) works too
    expect((await frank.post('/logout', {})).status).toBe(204);
    expect((await copyOf(frank).get('/api/me')).status).toBe(401);
  });

  it('shows a sign-out form, not a link, on every page of a signed-in user', async () => {
    const grace = await SiteClient.signedIn(service.url, { id: 5007, first_name: 'Grace' });
    for (const path of ['/', '/analytics', '/login']) {
      const page = await grace.get(path);
      expect(page.text, path).toContain('<form class="signout" method="post" action="/logout">');
      expect(page.text, path).not.toContain('href="/logout"');
    }
  });

  it('lets an administrator end every session of a user from the site; nobody else', async () => {
    const heidi = { id: 5008, first_name: 'Heidi' };
    const [laptop, phone] = [await SiteClient.signedIn(service.url, heidi), new SiteClient(service.url)];
    expect((await phone.post('/auth/webapp', { initData: signedInitData(heidi) })).status).toBe(200);
    const refused = await alice.post('/api/sessions/end', { telegram_id: String(heidi.id) });
    expect(refused.status).toBe(403);
    expect((await laptop.get('/api/me')).status).toBe(200);
    expect((await admin.post('/api/sessions/end', { telegram_id: 'heidi' })).json).toEqual({
      message: 'A Telegram user id is a number.',
      field: 'telegram_id',
    });
    expect(
      (await admin.post('/api/sessions/end', { telegram_id: String(heidi.id) }, { origin: 'https://evil.example' }))
        .status,
    ).toBe(403);
    expect((await laptop.get('/api/me')).status).toBe(200);
    const ended = await admin.post('/api/sessions/end', { telegram_id: String(heidi.id) });
    expect(ended.status).toBe(200);
    expect(ended.json).toEqual({ ended: 2 });
    expect((await laptop.get('/api/me')).status).toBe(401);
    expect((await phone.get('/api/me')).status).toBe(401);
    expect((await admin.get('/api/me')).status).toBe(200);
    const view = await admin.get('/analytics?all=1');
    expect(view.text).toContain('<form id="end-sessions"');
    expect((await alice.get('/analytics?all=1')).text).not.toContain('end-sessions');
  });

  it("lets the operator end a user's sessions from the CLI; every node honours it within seconds", async () => {
    const ivan = { id: 5009, first_name: 'Ivan' };
    const client = await SiteClient.signedIn(service.url, ivan);
    expect((await client.get('/api/me')).status).toBe(200);
    const result = await runCommand(service.services, ['sessions', 'end', '--telegram-id', String(ivan.id), '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ended: 1 });
    await eventually(
      async () => ((await client.get('/api/me')).status === 401 ? true : undefined),
      'the session to end',
      5_000,
    );
    const bad = await runCommand(service.services, ['sessions', 'end', '--telegram-id', 'ivan']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('a Telegram user id must be numeric');
  });
});

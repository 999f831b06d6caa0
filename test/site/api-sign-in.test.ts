// The site's Telegram sign-in over real HTTP: Login Widget payloads and Mini App initData accepted only when
// genuine and fresh, once, in the browser that asked for them; forged session cookies ignored.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { ADMIN, ALICE, appRow, BOB, startSiteApi } from './api-harness.ts';
import { signedInitData, signWidget, SiteClient, widgetPayload, widgetRedirect } from './site-harness.ts';

let service: TestService;
let admin: SiteClient;

beforeAll(async () => {
  ({ service, admin } = await startSiteApi());
});
afterAll(() => service?.close());

const now = () => Math.floor(Date.now() / 1000);

describe('sign-in with the Telegram Login Widget', () => {
  it('accepts a genuine payload: a signed, httpOnly, SameSite session cookie and a redirect to next', async () => {
    const client = new SiteClient(service.url);
    const answer = await client.sendWidgetPayload(widgetPayload(ALICE), '/analytics/some_app');
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('/analytics/some_app');
    const cookie = answer.sessionCookie!;
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/; HttpOnly/i);
    expect(cookie).toMatch(/; SameSite=Lax/i);
    expect(cookie).toMatch(/; Path=\//i);
    expect(cookie).toMatch(/; Max-Age=604800/i);
    expect(cookie).toMatch(/; Secure/i); // PUBLIC_URL is https
    const me = await client.get('/api/me');
    expect(me.status).toBe(200);
    expect(me.json).toEqual({ name: 'Alice Liddell', is_admin: false });
    expect((await admin.get('/api/me')).json).toEqual({ name: 'Ada', is_admin: true });
  });

  it('accepts a payload a few hours old (the 24 h window) and never redirects off-site', async () => {
    const client = new SiteClient(service.url);
    const answer = await client.get(
      widgetRedirect(
        widgetPayload(BOB, { authDate: now() - 23 * 3600 }),
        '//evil.example/steal',
        await client.loginState(),
      ),
    );
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('/analytics');
    expect(client.cookie).toBeDefined();
    for (const next of ['https://evil.example/', '/\\evil.example', 'javascript:alert(1)']) {
      const browser = new SiteClient(service.url);
      const again = await browser.get(widgetRedirect(widgetPayload(BOB), next, await browser.loginState()));
      expect(again.headers.get('location'), next).toBe('/analytics');
    }
  });

  it('refuses forged, tampered, stale and unsigned payloads with 403 and no cookie', async () => {
    const genuine = widgetPayload(ALICE);
    const forged: Record<string, Record<string, string>> = {
      'signed with another bot token': widgetPayload(ALICE, {
        botToken: '7000000000:AAOtherBotTokenOtherBotTokenOther',
      }),
      'wrong hash': { ...genuine, hash: crypto.randomBytes(32).toString('hex') },
      'tampered id (to become the admin)': { ...genuine, id: String(ADMIN.id) },
      'tampered name': { ...genuine, first_name: 'Mallory' },
      'field added after signing': { ...genuine, username: 'someone_else' },
      'older than 24 hours': widgetPayload(ALICE, { authDate: now() - 24 * 3600 - 60 }),
      'dated in the future': widgetPayload(ALICE, { authDate: now() + 3600 }),
      'missing hash': Object.fromEntries(Object.entries(genuine).filter(([key]) => key !== 'hash')),
      'empty hash': { ...genuine, hash: '' },
      'hash that is not hex': { ...genuine, hash: 'z'.repeat(64) },
      'truncated hash': { ...genuine, hash: genuine.hash!.slice(0, 32) },
      'missing auth_date': signWidget({ id: String(ALICE.id), first_name: 'Alice' }),
      'non-numeric id': signWidget({ id: 'alice', first_name: 'Alice', auth_date: String(now()) }),
    };
    for (const [what, payload] of Object.entries(forged)) {
      const client = new SiteClient(service.url);
      const answer = await client.sendWidgetPayload(payload);
      expect(answer.status, what).toBe(403);
      expect(answer.sessionCookie, what).toBeUndefined();
      expect(answer.headers.get('content-type')).toMatch(/^text\/html/);
      expect(answer.text, what).toContain('The Telegram login data is invalid or expired.');
    }
    // a second id appended to a genuine payload must not be taken for either
    const browser = new SiteClient(service.url);
    const duplicated = await browser.get(
      `${widgetRedirect(genuine, '/analytics', await browser.loginState())}&id=${ADMIN.id}`,
    );
    expect(duplicated.status).toBe(400);
    expect(duplicated.json).toEqual({ message: 'The query parameter "id" must be given once, as string.' });
    expect(duplicated.sessionCookie).toBeUndefined();
  });

  it('ignores session cookies that were not signed by the service', async () => {
    const client = await SiteClient.signedIn(service.url, ALICE);
    const [value, signature] = [
      client.cookie!.slice(0, client.cookie!.lastIndexOf('.')),
      client.cookie!.slice(client.cookie!.lastIndexOf('.') + 1),
    ];
    const data = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    expect(data.id).toBe(String(ALICE.id));
    const asAdmin = Buffer.from(JSON.stringify({ ...data, id: String(ADMIN.id) })).toString('base64url');
    for (const cookie of [`${asAdmin}.${signature}`, asAdmin, `${value}.${'A'.repeat(signature!.length)}`]) {
      const forged = new SiteClient(service.url);
      forged.cookie = cookie;
      expect((await forged.get('/api/me')).status).toBe(401);
      expect((await forged.get('/api/apps?all=1')).status).toBe(401);
    }
  });

  it('asks for sign-in: 401 on the API, a redirect to /login on pages; signing out clears the cookie', async () => {
    const anonymous = new SiteClient(service.url);
    expect((await anonymous.get('/api/me')).json).toEqual({ message: 'Sign in first.' });
    expect((await anonymous.get('/api/apps')).status).toBe(401);
    expect(
      (await anonymous.post('/api/apps', { bot: '@x_bot', domain: 'x.example.com', app_name: 'anonymous_app' })).status,
    ).toBe(401);
    expect(await appRow('anonymous_app')).toBeNull();
    const page = await anonymous.get('/analytics/some_app');
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe('/login?next=%2Fanalytics%2Fsome_app');
    expect((await anonymous.get('/login')).status).toBe(200);

    const client = await SiteClient.signedIn(service.url, BOB);
    const out = await client.request('POST', '/logout', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(out.status).toBe(303);
    expect(out.headers.get('location')).toBe('/');
    expect(out.sessionCookie).toMatch(/^tma_session=;/);
    expect(out.sessionCookie).toMatch(/Expires=Thu, 01 Jan 1970|Max-Age=0/i);
    expect(client.cookie).toBeUndefined();
  });
});

describe('sign-in in Mini App mode (initData)', () => {
  it('accepts initData signed with the bot token and starts a session', async () => {
    const client = new SiteClient(service.url);
    const answer = await client.post('/auth/webapp', { initData: signedInitData(ALICE) });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toEqual({ name: 'Alice Liddell' });
    expect(answer.sessionCookie).toMatch(/; HttpOnly/i);
    expect((await client.get('/api/me')).json).toEqual({ name: 'Alice Liddell', is_admin: false });
  });

  it('refuses forged, tampered, stale and missing initData with 403 and no cookie', async () => {
    const genuine = signedInitData(BOB);
    const forged: Record<string, unknown> = {
      'signed with another bot token': signedInitData(BOB, {
        botToken: '7000000000:AAOtherBotTokenOtherBotTokenOther',
      }),
      'tampered user id (to become the admin)': genuine.replace(`%22id%22%3A${BOB.id}`, `%22id%22%3A${ADMIN.id}`),
      'hash replaced': genuine.replace(/hash=[0-9a-f]+/, `hash=${'0'.repeat(64)}`),
      'hash removed': genuine.replace(/&?hash=[0-9a-f]+/, ''),
      'older than 24 hours': signedInitData(BOB, { authDate: new Date(Date.now() - 25 * 3600_000) }),
      'empty string': '',
      'not a string': { user: BOB },
      'a Login Widget payload instead': new URLSearchParams(widgetPayload(BOB)).toString(),
    };
    expect(forged['tampered user id (to become the admin)']).not.toBe(genuine);
    for (const [what, initData] of Object.entries(forged)) {
      const client = new SiteClient(service.url);
      const answer = await client.post('/auth/webapp', { initData });
      expect(answer.status, what).toBe(403);
      expect(answer.json, what).toEqual({ message: 'The Mini App init data is invalid or expired.' });
      expect(answer.sessionCookie, what).toBeUndefined();
    }
    const noBody = await new SiteClient(service.url).request('POST', '/auth/webapp');
    expect(noBody.status).toBe(403);
    expect(noBody.sessionCookie).toBeUndefined();
  });

  it('serves the /webapp page whose script posts Telegram.WebApp.initData', async () => {
    const page = await new SiteClient(service.url).get('/webapp');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<script src="/assets/webapp.js"></script>');
    const script = await new SiteClient(service.url).get('/assets/webapp.js');
    expect(script.text).toContain("fetch('/auth/webapp'");
  });

  it("keeps a Mini App session in the cookie Telegram's web frame can hold: SameSite=None, Secure, Partitioned", async () => {
    const answer = await new SiteClient(service.url).post('/auth/webapp', { initData: signedInitData(BOB) });
    expect(answer.status).toBe(200);
    expect(answer.sessionCookie).toMatch(/; SameSite=None/i);
    expect(answer.sessionCookie).toMatch(/; Secure/i);
    expect(answer.sessionCookie).toMatch(/; Partitioned/i);
  });

  it('signs in once per initData: a replay in another browser is refused; the same Mini App reloading stays signed in', async () => {
    const initData = signedInitData({ id: 3003, first_name: 'Carol' });
    const carol = new SiteClient(service.url);
    expect((await carol.post('/auth/webapp', { initData })).status).toBe(200);
    const reload = await carol.post('/auth/webapp', { initData });
    expect(reload.status).toBe(200);
    expect(reload.json).toEqual({ name: 'Carol' });
    expect((await carol.get('/api/me')).status).toBe(200);
    const thief = new SiteClient(service.url);
    const replay = await thief.post('/auth/webapp', { initData });
    expect(replay.status).toBe(403);
    expect(replay.json).toEqual({
      message: 'This Mini App sign-in was already used. Open the dashboard from the bot again.',
    });
    expect(replay.sessionCookie).toBeUndefined();
    expect((await thief.get('/api/me')).status).toBe(401);
  });

  it('refuses initData posted from another site', async () => {
    const answer = await new SiteClient(service.url).post(
      '/auth/webapp',
      { initData: signedInitData(BOB) },
      { origin: 'https://evil.example' },
    );
    expect(answer.status).toBe(403);
    expect(answer.sessionCookie).toBeUndefined();
  });
});

describe('sign-in payloads work once, in the browser that asked for them', () => {
  it('refuses a replayed Login Widget payload in another browser (it would sign the victim in as someone else)', async () => {
    const payload = widgetPayload({ id: 4004, first_name: 'Dave' });
    const dave = new SiteClient(service.url);
    expect((await dave.sendWidgetPayload(payload)).status).toBe(302);
    const victim = new SiteClient(service.url);
    const replay = await victim.sendWidgetPayload(payload);
    expect(replay.status).toBe(403);
    expect(replay.text).toContain('This Telegram login was already used. Sign in again.');
    expect(replay.sessionCookie).toBeUndefined();
    expect((await victim.get('/api/me')).status).toBe(401);
    // the back button in Dave's own browser lands him where he was, still signed in
    const back = await dave.sendWidgetPayload(payload);
    expect(back.status).toBe(302);
    expect((await dave.get('/api/me')).json).toEqual({ name: 'Dave', is_admin: false });
  });

  it('refuses a fresh payload sent to a browser that did not open the sign-in page (login CSRF)', async () => {
    const payload = widgetPayload({ id: 4005, first_name: 'Mallory' });
    const victim = new SiteClient(service.url);
    const withoutState = await victim.get(widgetRedirect(payload));
    expect(withoutState.status).toBe(403);
    expect(withoutState.text).toContain('This sign-in did not start on this browser&#39;s sign-in page.');
    expect(withoutState.sessionCookie).toBeUndefined();
    // the attacker's own state does not work in the victim's browser either
    const attacker = new SiteClient(service.url);
    const foreign = await victim.get(widgetRedirect(payload, '/analytics', await attacker.loginState()));
    expect(foreign.status).toBe(403);
    expect(foreign.sessionCookie).toBeUndefined();
    expect((await victim.get('/api/me')).status).toBe(401);
    // the payload was not used up by the refused attempts
    expect((await attacker.sendWidgetPayload(payload)).status).toBe(302);
  });

  it('keeps one sign-in state per browser, so two open sign-in pages both work', async () => {
    const browser = new SiteClient(service.url);
    const first = await browser.widgetAuthUrl('/analytics');
    const second = await browser.widgetAuthUrl('/catalog');
    expect(new URL(second, 'http://x').searchParams.get('state')).toBe(
      new URL(first, 'http://x').searchParams.get('state'),
    );
    const answer = await browser.get(
      `${first}&${new URLSearchParams(widgetPayload({ id: 4006, first_name: 'Nia' })).toString()}`,
    );
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('/analytics');
  });
});

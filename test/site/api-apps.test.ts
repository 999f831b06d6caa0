// The Analytics section's app API: tokens made, rotated and revoked with the bot's rules and messages,
// domains and deletion; owners, strangers (404 as for a missing app) and administrators (audited).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAppName, parseBotAddress, parseDomain } from '../../src/tokens/inputs.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { appRow, create, startSiteApi } from './api-harness.ts';
import type { SiteClient } from './site-harness.ts';

let service: TestService;
let alice: SiteClient;
let bob: SiteClient;
let admin: SiteClient;

beforeAll(async () => {
  ({ service, alice, bob, admin } = await startSiteApi());
});
afterAll(() => service?.close());

const errorOf = (parsed: { ok: true } | { ok: false; error: string }) => (parsed.ok ? 'accepted' : parsed.error);

async function eventCount(appName: string): Promise<number> {
  await service.loaded();
  const [row] = await service.store.sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM events e JOIN apps a ON a.id = e.app_id WHERE a.app_name = $1',
    [appName],
  );
  return row!.n;
}

describe("Analytics section: tokens with the bot's rules and messages", () => {
  it('refuses bad input with 400, the message of the bot and the field; a taken name with 409', async () => {
    const cases = [
      {
        body: { bot: 'https://example.com/shop', domain: 'ok.example.com', app_name: 'ok_app' },
        field: 'bot',
        message: errorOf(parseBotAddress('https://example.com/shop')),
      },
      {
        body: { bot: '@not_a_b0t', domain: 'ok.example.com', app_name: 'ok_app' },
        field: 'bot',
        message: errorOf(parseBotAddress('@not_a_b0t')),
      },
      { body: { domain: 'ok.example.com', app_name: 'ok_app' }, field: 'bot', message: errorOf(parseBotAddress('')) },
      {
        body: { bot: '@okay_app_bot', domain: '192.168.0.10', app_name: 'ok_app' },
        field: 'domain',
        message: errorOf(parseDomain('192.168.0.10', { allowLocalhost: false })),
      },
      {
        body: { bot: '@okay_app_bot', domain: 'localhost', app_name: 'ok_app' },
        field: 'domain',
        message: errorOf(parseDomain('localhost', { allowLocalhost: false })),
      },
      {
        body: { bot: '@okay_app_bot', domain: 'no spaces.example', app_name: 'ok_app' },
        field: 'domain',
        message: errorOf(parseDomain('no spaces.example', { allowLocalhost: false })),
      },
      {
        body: { bot: '@okay_app_bot', domain: 'ok.example.com', app_name: 'Alice Shop' },
        field: 'app_name',
        message: errorOf(parseAppName('Alice Shop')),
      },
      {
        body: { bot: '@okay_app_bot', domain: 'ok.example.com', app_name: 'ab' },
        field: 'app_name',
        message: errorOf(parseAppName('ab')),
      },
    ];
    for (const { body, field, message } of cases) {
      expect(message).not.toBe('accepted');
      const answer = await alice.post('/api/apps', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json).toEqual({ message, field });
    }
    expect(await appRow('ok_app')).toBeNull();

    await create(bob, 'taken_name');
    const taken = await alice.post('/api/apps', {
      bot: '@alice_bot',
      domain: 'alice.example.com',
      app_name: 'taken_name',
    });
    expect(taken.status).toBe(409);
    expect(taken.json).toEqual({ message: 'The app name "taken_name" is already taken.' });
  });

  it('creates a token like the bot (normalised bot and domain), lists it with prefix and last event time', async () => {
    const created = await alice.post('/api/apps', {
      bot: 'https://t.me/Alice_Shop_Bot',
      domain: 'https://Shop.Example.com/app?x=1',
      app_name: 'alice_shop',
    });
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
    const sent = await postEvents(
      service.url,
      [makeEvent('alice_shop'), makeEvent('alice_shop', { event_name: 'app-hide' })],
      { token, origin: 'https://shop.example.com' },
    );
    expect(sent.status).toBe(201);
    const after = await alice.get('/api/apps');
    const app = after.json.find((entry: { app_name: string }) => entry.app_name === 'alice_shop');
    expect(app.events_total).toBe(2);
    const last = Date.parse(app.last_event_at);
    expect(last).toBeGreaterThanOrEqual(before - 1000);
    expect(last).toBeLessThanOrEqual(Date.now());
    expect((await alice.get('/api/apps/alice_shop')).json).toMatchObject({
      app_name: 'alice_shop',
      last_event_at: app.last_event_at,
      events_total: 2,
    });
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
    expect(
      (await alice.get('/api/apps')).json.find((app: { app_name: string }) => app.app_name === 'rotating_app'),
    ).toMatchObject({ token_prefix: null, events_total: 2 });

    // a revoked app can get a token again
    const third = (await alice.post('/api/apps/rotating_app/regenerate')).json.token;
    expect((await postEvents(service.url, makeEvent('rotating_app'), { token: third, origin })).status).toBe(201);
    expect(await eventCount('rotating_app')).toBe(3);
  });

  it("adds and removes domains with the bot's rules; events follow the domains at once", async () => {
    const token = await create(alice, 'domains_app', 'first.example.com');
    const added = await alice.post('/api/apps/domains_app/domains', { add: 'https://Second.Example.com/path' });
    expect(added.status).toBe(200);
    expect(added.json.domains).toEqual(['first.example.com', 'second.example.com']);
    expect(
      (await postEvents(service.url, makeEvent('domains_app'), { token, origin: 'https://second.example.com' })).status,
    ).toBe(201);

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
    const refused = await postEvents(service.url, makeEvent('domains_app'), {
      token,
      origin: 'https://first.example.com',
    });
    expect(refused.status).toBe(403);
    expect(refused.text).toBe('{"message":"The domain name does not match."}');

    const last = await alice.post('/api/apps/domains_app/domains', { remove: 'second.example.com' });
    expect(last.status).toBe(409);
    expect(last.json.message).toBe(
      'second.example.com is the only domain of domains_app: add the new one before removing it.',
    );
    const unknown = await alice.post('/api/apps/domains_app/domains', { remove: 'third.example.com' });
    expect(unknown.status).toBe(404);
    expect((await appRow('domains_app'))!.domains).toEqual(['second.example.com']);
  });

  it('registers an app in the public catalog or not, as its owner chooses, and changes the choice', async () => {
    const out = await alice.post('/api/apps', {
      bot: '@alice_quiet_bot',
      domain: 'quiet.example.com',
      app_name: 'alice_quiet',
      catalog_listed: false,
    });
    expect(out.status).toBe(201);
    expect(out.json.catalog_listed).toBe(false);
    // without the field: listed, as the form's box is ticked
    const listed = await alice.post('/api/apps', {
      bot: '@alice_loud_bot',
      domain: 'loud.example.com',
      app_name: 'alice_loud',
    });
    expect(listed.json.catalog_listed).toBe(true);
    expect((await alice.post('/api/apps/alice_quiet/catalog', { catalog_listed: true })).json.catalog_listed).toBe(
      true,
    );
    expect((await appRow('alice_quiet'))!.catalogListed).toBe(true);
    const bad = await alice.post('/api/apps/alice_quiet/catalog', { catalog_listed: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({
      message: 'Send {"catalog_listed": true} to list the app in the public catalog, or false.',
      field: 'catalog_listed',
    });
    expect((await bob.post('/api/apps/alice_quiet/catalog', { catalog_listed: false })).status).toBe(404);
    expect((await appRow('alice_quiet'))!.catalogListed).toBe(true);
  });

  it('deletes an app with its token and events', async () => {
    const token = await create(alice, 'doomed_app');
    expect(
      (await postEvents(service.url, makeEvent('doomed_app'), { token, origin: 'https://doomed-app.example.com' }))
        .status,
    ).toBe(201);
    expect(await eventCount('doomed_app')).toBe(1);
    const deleted = await alice.delete('/api/apps/doomed_app');
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await alice.get('/api/apps/doomed_app')).status).toBe(404);
    expect((await alice.get('/api/apps')).json.map((app: { app_name: string }) => app.app_name)).not.toContain(
      'doomed_app',
    );
    expect(await appRow('doomed_app')).toBeNull();
    const [orphans] = await service.store.sql.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM events WHERE app_id NOT IN (SELECT id FROM apps)',
    );
    expect(orphans!.n).toBe(0);
    const after = await postEvents(service.url, makeEvent('doomed_app'), {
      token,
      origin: 'https://doomed-app.example.com',
    });
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
    expect(
      (await postEvents(service.url, makeEvent('private_app', { user_id: 5550001 }), { token, origin })).status,
    ).toBe(201);
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
    expect(
      (
        await postEvents(service.url, makeEvent('private_app', { event_name: 'app-hide', user_id: 5550001 }), {
          token,
          origin,
        })
      ).status,
    ).toBe(201);
    expect((await bob.get('/api/apps')).json.map((app: { app_name: string }) => app.app_name)).not.toContain(
      'private_app',
    );
  });

  it('lets ?all=1 list every app for administrators only', async () => {
    await create(bob, 'bob_listed');
    const bobs = (await bob.get('/api/apps')).json.map((app: { app_name: string }) => app.app_name);
    // bob's own apps only (other tests may have given him more), whatever he asks
    expect(bobs).toContain('bob_listed');
    expect(bobs).not.toContain('private_app');
    expect((await bob.get('/api/apps?all=1')).json.map((app: { app_name: string }) => app.app_name)).toEqual(bobs);
    expect((await admin.get('/api/apps')).json).toEqual([]); // the admin's own apps: none
    const everyone = (await admin.get('/api/apps?all=1')).json.map((app: { app_name: string }) => app.app_name);
    expect(everyone).toEqual(expect.arrayContaining(['private_app', 'bob_listed']));
  });

  it("lets administrators see and change anybody's app, marked as admin in the audit log", async () => {
    // an app of alice's own for this test, with two events of one user in two sessions
    const origin = 'https://watched-app.example.com';
    let token = await create(alice, 'watched_app');
    for (const event_name of ['app-init', 'app-hide'])
      expect(
        (await postEvents(service.url, makeEvent('watched_app', { event_name, user_id: 5550002 }), { token, origin }))
          .status,
      ).toBe(201);
    await service.loaded();
    expect((await admin.get('/api/apps/watched_app')).json).toMatchObject({ app_name: 'watched_app', events_total: 2 });
    const dashboard = await admin.get('/api/apps/watched_app/dashboard?days=7');
    expect(dashboard.status).toBe(200);
    expect(dashboard.json.totals).toEqual({ events: 2, users: 1, verifiedUsers: 0, sessions: 2 });
    const csv = await admin.get('/api/apps/watched_app/export.csv?days=7');
    expect(csv.status).toBe(200);
    expect(csv.text.trim().split('\n')).toHaveLength(3);
    expect((await admin.get('/api/apps/watched_app/recent')).json).toHaveLength(2);
    expect(
      (await admin.post('/api/apps/watched_app/domains', { add: 'admin-added.example.com' })).json.domains,
    ).toContain('admin-added.example.com');
    const regenerated = await admin.post('/api/apps/watched_app/regenerate');
    expect(regenerated.status).toBe(200);
    expect((await postEvents(service.url, makeEvent('watched_app'), { token, origin })).text).toBe(
      '{"message":"Token is invalid."}',
    );
    token = regenerated.json.token;
    const audit = await service.store.prisma.auditLog.findMany({
      where: { appName: 'watched_app', action: 'token.regenerate' },
    });
    expect(audit.map((entry) => entry.detail)).toEqual([{ admin: true }]);

    const bobsToken = await create(bob, 'bob_disposable');
    expect((await admin.delete('/api/apps/bob_disposable')).status).toBe(204);
    expect((await bob.get('/api/apps/bob_disposable')).status).toBe(404);
    expect(
      (
        await postEvents(service.url, makeEvent('bob_disposable'), {
          token: bobsToken,
          origin: 'https://bob-disposable.example.com',
        })
      ).status,
    ).toBe(400);
  });
});

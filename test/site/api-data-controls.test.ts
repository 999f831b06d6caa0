// The site API's data controls: the retention period (read, set, 400 for a bad value), erasing a user's data (the
// counts, 400 for a bad id, audited without the id), other users answered 404 as for a missing app, administrators
// allowed and marked, writes only same-origin JSON; and the app page that carries the card.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { create, domainOf, startSiteApi } from './api-harness.ts';
import type { SiteClient } from './site-harness.ts';

const ERASED_USER = 880000111;
const KEPT_USER = 880000222;
/** what a user who may not see an app is told: the same as for an app that does not exist */
const notFound = (appName: string) => ({ message: `There is no app named "${appName}".` });
const BAD_RETENTION = { message: 'Retention must be 30, 90, 180, 365 days or "forever".', field: 'days' };
const BAD_USER = {
  message: 'A Telegram user id is a positive number such as 123456789.',
  field: 'telegram_user_id',
};

let service: TestService;
let alice: SiteClient;
let bob: SiteClient;
let admin: SiteClient;

beforeAll(async () => {
  ({ service, alice, bob, admin } = await startSiteApi());
});
afterAll(() => service?.close());

interface DataApp {
  name: string;
  id: number;
}

let appsMade = 0;

/**
 * A new app of Alice's with two events of ERASED_USER and one of KEPT_USER, retention "forever": every case
 * changes the retention or erases users, so each gets an app of its own.
 */
async function aliceAppWithEvents(): Promise<DataApp> {
  const name = `alice_data_${++appsMade}`;
  const token = await create(alice, name);
  const id = (await service.store.prisma.app.findUniqueOrThrow({ where: { appName: name } })).id;
  const sent = [ERASED_USER, ERASED_USER, KEPT_USER].map((user) => makeEvent(name, { user_id: user }));
  const origin = `https://${domainOf(name)}`;
  expect((await postEvents(service.url, sent, { token, origin })).status).toBe(201);
  await service.loaded();
  return { name, id };
}

const retentionOf = async (app: DataApp) =>
  (await service.store.prisma.app.findUniqueOrThrow({ where: { id: app.id }, select: { retentionDays: true } }))
    .retentionDays;

async function eventsOf(app: DataApp, user: number): Promise<number> {
  const key = service.services.pseudonymiser.userKey(app.id, String(user));
  const [row] = await service.store.sql.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM events WHERE app_id = $1 AND user_key = decode($2, 'base64')`,
    [app.id, key.toString('base64')],
  );
  return row!.n;
}

describe('retention in the site API', () => {
  it('reads and sets the retention period, audited', async () => {
    const app = await aliceAppWithEvents();
    expect((await alice.get(`/api/apps/${app.name}/data-controls`)).json).toEqual({
      app_name: app.name,
      retention_days: null,
      retention_choices: [30, 90, 180, 365, null],
    });
    const set = await alice.post(`/api/apps/${app.name}/retention`, { days: 90 });
    expect(set.status, set.text).toBe(200);
    expect(set.json).toMatchObject({ app_name: app.name, retention_days: 90 });
    expect(await retentionOf(app)).toBe(90);
    expect((await alice.post(`/api/apps/${app.name}/retention`, { days: '180' })).json.retention_days).toBe(180);
    expect((await alice.post(`/api/apps/${app.name}/retention`, { days: 'forever' })).json.retention_days).toBeNull();
    expect((await alice.post(`/api/apps/${app.name}/retention`, { days: 30 })).json.retention_days).toBe(30);
    expect((await alice.post(`/api/apps/${app.name}/retention`, { days: null })).json.retention_days).toBeNull();
    const audit = await service.store.prisma.auditLog.findMany({ where: { appId: app.id, action: 'app.retention' } });
    expect(audit.map((entry) => entry.surface)).toEqual(['site', 'site', 'site', 'site', 'site']);
  });

  it('answers a bad value 400 with the rule, and changes nothing', async () => {
    const app = await aliceAppWithEvents();
    for (const body of [
      {},
      { days: 7 },
      { days: 'never' },
      { days: [90] },
      { days: 90.5 },
      { days: '' },
      [],
      'text',
      12,
    ]) {
      const answer = await alice.post(`/api/apps/${app.name}/retention`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json, JSON.stringify(body)).toEqual(BAD_RETENTION);
    }
    expect(await retentionOf(app)).toBeNull();
  });
});

describe("erasing a user's data in the site API", () => {
  it('answers a bad id 400 and deletes nothing', async () => {
    const app = await aliceAppWithEvents();
    for (const body of [
      {},
      { telegram_user_id: 'abc' },
      { telegram_user_id: 0 },
      { telegram_user_id: -5 },
      { telegram_user_id: '0123' },
      { telegram_user_id: [ERASED_USER] },
      { telegram_user_id: 1.5 },
      null,
    ]) {
      const answer = await alice.post(`/api/apps/${app.name}/users/erase`, body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json, JSON.stringify(body)).toEqual(BAD_USER);
    }
    expect(await eventsOf(app, ERASED_USER)).toBe(2);
  });

  it("erases the user's events and per-user rows, keeps the other user's, and audits it without the id", async () => {
    const app = await aliceAppWithEvents();
    const answer = await alice.post(`/api/apps/${app.name}/users/erase`, { telegram_user_id: String(ERASED_USER) });
    expect(answer.status, answer.text).toBe(200);
    expect(answer.json).toEqual({
      app_name: app.name,
      user: expect.stringMatching(/^[A-Za-z0-9_-]{12}$/),
      deleted: {
        events: 2,
        daily_sessions: 2,
        daily_users: 1,
        app_users: 1,
        wallet_users: 0,
        verified_sessions: 0,
        funnel_postings: 2,
      },
      complete: true,
    });
    expect(await eventsOf(app, ERASED_USER)).toBe(0);
    expect(await eventsOf(app, KEPT_USER)).toBe(1);
    // the dashboard's totals keep counting the user
    expect((await alice.get(`/api/apps/${app.name}/dashboard?days=7`)).json.totals).toMatchObject({ events: 3 });
    const audit = await service.store.prisma.auditLog.findMany({ where: { appId: app.id, action: 'user.erase' } });
    expect(audit.map((entry) => [entry.surface, entry.detail])).toEqual([
      ['site', { user: answer.json.user, deleted: answer.json.deleted, complete: true, admin: false }],
    ]);
    // a number names the same user: nothing left, and the erase gets a reference of its own (random, so the audit
    // log's references lead back to no id)
    const again = await alice.post(`/api/apps/${app.name}/users/erase`, { telegram_user_id: ERASED_USER });
    expect(again.json.user).toMatch(/^[A-Za-z0-9_-]{12}$/);
    expect(again.json.user).not.toBe(answer.json.user);
    expect(again.json.deleted.events).toBe(0);
  });
});

describe('who may use the data controls', () => {
  it('answers another user 404 as for a missing app on every route, and changes nothing', async () => {
    const app = await aliceAppWithEvents();
    const routes: [string, string, unknown?][] = [
      ['GET', `/api/apps/${app.name}/data-controls`],
      ['POST', `/api/apps/${app.name}/retention`, { days: 30 }],
      ['POST', `/api/apps/${app.name}/users/erase`, { telegram_user_id: String(KEPT_USER) }],
    ];
    for (const [method, path, body] of routes) {
      const answer = await bob.request(method, path, { body });
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.json).toEqual(notFound(app.name));
      const missing = await bob.request(method, path.replace(app.name, 'missing_app'), { body });
      expect(missing.status).toBe(404);
      expect(missing.json).toEqual(notFound('missing_app'));
    }
    expect(await retentionOf(app)).toBeNull();
    expect(await eventsOf(app, KEPT_USER)).toBe(1);
  });

  it('refuses writes from another origin or not in JSON with 403', async () => {
    const app = await aliceAppWithEvents();
    for (const [path, body] of [
      [`/api/apps/${app.name}/retention`, { days: 30 }],
      [`/api/apps/${app.name}/users/erase`, { telegram_user_id: String(KEPT_USER) }],
    ] as const) {
      const answer = await alice.request('POST', path, { body, origin: 'https://evil.example' });
      expect(answer.status, path).toBe(403);
      expect(answer.json).toEqual({ message: 'Cross-site or non-JSON request refused.' });
    }
    expect(await retentionOf(app)).toBeNull();
    expect(await eventsOf(app, KEPT_USER)).toBe(1);
  });

  it('lets an administrator set the retention and erase, marked as admin in the audit log', async () => {
    const app = await aliceAppWithEvents();
    expect((await admin.post(`/api/apps/${app.name}/retention`, { days: 365 })).json.retention_days).toBe(365);
    const erased = await admin.post(`/api/apps/${app.name}/users/erase`, { telegram_user_id: String(KEPT_USER) });
    expect(erased.json.deleted.events).toBe(1);
    const audit = await service.store.prisma.auditLog.findMany({
      where: { appId: app.id, surface: 'site' },
      orderBy: { id: 'desc' },
      take: 2,
    });
    expect(audit.map((entry) => [entry.action, (entry.detail as { admin: boolean }).admin])).toEqual([
      ['user.erase', true],
      ['app.retention', true],
    ]);
  });

  it('puts the data controls card and its script on the app page', async () => {
    const app = await aliceAppWithEvents();
    const page = await alice.get(`/analytics/${app.name}`);
    expect(page.text).toContain(`<div class="card" id="data-controls" data-app="${app.name}" hidden></div>`);
    expect(page.text).toContain('<script src="/assets/data-controls.js"></script>');
    const script = await fetch(`${service.url}/assets/data-controls.js`);
    expect(script.status).toBe(200);
    expect(await script.text()).toContain("'/users/erase'");
  });
});

// Every site API route that takes an app, called by its owner, an editor, a viewer, a stranger and an administrator:
// allowed (2xx), refused by role (403) or invisible (404), as src/tokens/policy.ts decides. The routes are collected
// from the API itself, so a new route without an expectation here fails the suite.
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerApi } from '../../src/site/api/index.ts';
import { SiteContext } from '../../src/site/context.ts';
import { allows, type AppRole, type Permission } from '../../src/tokens/policy.ts';
import { OPERATOR, type Actor } from '../../src/tokens/registry.ts';
import type { TestService } from '../helpers/service.ts';
import { ADMIN, ALICE, BOB, create, startSiteApi } from './api-harness.ts';
import { SiteClient, type TelegramUser } from './site-harness.ts';

const CAROL: TelegramUser = { id: 3003, first_name: 'Carol', username: 'carol' };
const DAVE: TelegramUser = { id: 4004, first_name: 'Dave', username: 'dave' };
const ERIN: TelegramUser = { id: 5005, first_name: 'Erin' };

type Who = AppRole | 'stranger';
const WHO: Who[] = ['owner', 'editor', 'viewer', 'stranger', 'administrator'];

let service: TestService;
const clients = {} as Record<Who, SiteClient>;
const aliceActor: Actor = { surface: 'site', telegramId: String(ALICE.id) };

beforeAll(async () => {
  const api = await startSiteApi();
  service = api.service;
  Object.assign(clients, {
    owner: api.alice,
    editor: api.bob,
    viewer: await SiteClient.signedIn(service.url, CAROL),
    stranger: await SiteClient.signedIn(service.url, DAVE),
    administrator: api.admin,
  });
});
afterAll(() => service?.close());

let apps = 0;

/** a new app of Alice's with Bob as editor, Carol and Erin as viewers; Erin is who removals and transfers name */
async function team(): Promise<{ appName: string; erin: string }> {
  const appName = `team_app_${++apps}`;
  await create(clients.owner, appName);
  const { members } = service.services;
  for (const [user, role] of [
    [BOB, 'editor'],
    [CAROL, 'viewer'],
    [ERIN, 'viewer'],
  ] as const) {
    const { code } = await members.createInvite(appName, role, aliceActor);
    await members.acceptInvite(code, String(user.id), user.first_name);
  }
  const listed = (await members.list(appName, aliceActor)).members;
  return { appName, erin: listed.find((member) => member.name === 'Erin')!.ref };
}

interface Fixture {
  appName: string;
  erin: string;
  who: Who;
}

interface RouteCase {
  permission: Permission;
  /** the path's parameters besides :name */
  params?: (fixture: Fixture) => Promise<Record<string, string>> | Record<string, string>;
  query?: string;
  body?: (fixture: Fixture) => Promise<unknown> | unknown;
  /** the call changes the app beyond use (deleted, handed over, a member gone): each caller gets a new team */
  fresh?: boolean;
  /** runs before the call, as the operator (what the call needs to find) */
  before?: (fixture: Fixture) => Promise<unknown>;
}

let domains = 0;
const keyPrefix = async (kind: 'readKeys' | 'serverKeys', { appName }: Fixture) =>
  (await service.services[kind].create(appName, OPERATOR)).readKey.prefix;
const funnelId = async ({ appName }: Fixture) => {
  const { appId } = await service.services.registry.getApp(appName, OPERATOR);
  const funnel = await service.store.prisma.savedFunnel.create({
    data: { appId, name: `f${++domains}`, steps: ['a', 'b'], by: 'user', window: '1d' },
  });
  return String(funnel.id);
};

const ROUTES: Record<string, RouteCase> = {
  'GET /api/apps/:name': { permission: 'view' },
  'GET /api/apps/:name/overview': { permission: 'view' },
  'DELETE /api/apps/:name': { permission: 'delete', fresh: true },
  'POST /api/apps/:name/revoke': { permission: 'manage-tokens' },
  'POST /api/apps/:name/regenerate': { permission: 'manage-tokens' },
  'POST /api/apps/:name/domains': {
    permission: 'manage-domains',
    body: () => ({ add: `added-${++domains}.example.org` }),
  },
  'POST /api/apps/:name/bot-id': { permission: 'manage-domains', body: () => ({ bot_id: '7000000001' }) },
  'POST /api/apps/:name/catalog': { permission: 'share', body: () => ({ catalog_listed: false }) },
  'GET /api/apps/:name/read-keys': { permission: 'manage-tokens' },
  'POST /api/apps/:name/read-keys': { permission: 'manage-tokens' },
  'POST /api/apps/:name/read-keys/revoke': {
    permission: 'manage-tokens',
    body: async (fixture) => ({ prefix: await keyPrefix('readKeys', fixture) }),
  },
  'GET /api/apps/:name/server-keys': { permission: 'manage-tokens' },
  'POST /api/apps/:name/server-keys': { permission: 'manage-tokens' },
  'POST /api/apps/:name/server-keys/revoke': {
    permission: 'manage-tokens',
    body: async (fixture) => ({ prefix: await keyPrefix('serverKeys', fixture) }),
  },
  'GET /api/apps/:name/share': { permission: 'share' },
  'POST /api/apps/:name/share': { permission: 'share' },
  'DELETE /api/apps/:name/share': {
    permission: 'share',
    before: ({ appName }) => service.services.shareLinks.create(appName, OPERATOR),
  },
  'GET /api/apps/:name/alerts': { permission: 'view' },
  'POST /api/apps/:name/alerts': { permission: 'view', body: () => ({ digest: true }) },
  'GET /api/apps/:name/data-controls': { permission: 'view' },
  'POST /api/apps/:name/retention': { permission: 'manage-data', body: () => ({ days: 365 }) },
  'POST /api/apps/:name/users/erase': { permission: 'manage-data', body: () => ({ telegram_user_id: '424242' }) },
  'GET /api/apps/:name/dashboard': { permission: 'view' },
  'GET /api/apps/:name/insights': { permission: 'view' },
  'GET /api/apps/:name/funnel': { permission: 'view', query: '?steps=app-init,purchase' },
  'GET /api/apps/:name/funnels': { permission: 'view' },
  'POST /api/apps/:name/funnels': {
    permission: 'save-funnels',
    body: () => ({ name: `saved ${++domains}`, steps: ['app-init', 'purchase'] }),
  },
  'DELETE /api/apps/:name/funnels/:id': {
    permission: 'save-funnels',
    params: async (fixture) => ({ id: await funnelId(fixture) }),
  },
  'GET /api/apps/:name/custom-events/:event/properties/:property': {
    permission: 'view',
    params: () => ({ event: 'purchase', property: 'plan' }),
  },
  'GET /api/apps/:name/recent': { permission: 'view' },
  'GET /api/apps/:name/export.:format': { permission: 'view', params: () => ({ format: 'csv' }) },
  'GET /api/apps/:name/members': { permission: 'view-members' },
  'POST /api/apps/:name/invites': { permission: 'manage-members', body: () => ({ role: 'viewer' }) },
  'DELETE /api/apps/:name/members/:ref': {
    permission: 'manage-members',
    fresh: true,
    params: ({ erin }) => ({ ref: erin }),
  },
  'POST /api/apps/:name/transfer': { permission: 'transfer', fresh: true, body: ({ erin }) => ({ ref: erin }) },
};

/** every route the site API registers whose path names an app */
async function appRoutes(): Promise<string[]> {
  const probe = Fastify();
  const routes: string[] = [];
  probe.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD' && route.url.includes(':name')) routes.push(`${method} ${route.url}`);
    }
  });
  registerApi(probe, new SiteContext(service.services, {}));
  await probe.ready();
  await probe.close();
  return routes;
}

function expected(who: Who, permission: Permission): number | 'ok' {
  if (who === 'stranger') return 404;
  return allows(who, permission) ? 'ok' : 403;
}

describe('site API routes by role', () => {
  it('has an expectation for every route that takes an app, and only for those', async () => {
    expect((await appRoutes()).sort()).toEqual(Object.keys(ROUTES).sort());
  });

  it('allows, refuses (403) or hides (404) each route as the policy says', async () => {
    const shared = await team();
    const failures: string[] = [];
    for (const [route, routeCase] of Object.entries(ROUTES)) {
      const [method, pattern] = route.split(' ') as [string, string];
      for (const who of WHO) {
        const fixture = { ...(routeCase.fresh ? await team() : shared), who };
        await routeCase.before?.(fixture);
        const params = { name: fixture.appName, ...(await routeCase.params?.(fixture)) };
        const path =
          pattern.replace(/:([a-z]+)/g, (_, key: string) => encodeURIComponent(params[key as keyof typeof params]!)) +
          (routeCase.query ?? '');
        const body = await routeCase.body?.(fixture);
        const answer = await clients[who].request(
          method,
          path,
          method === 'GET' || method === 'DELETE' ? {} : { body: body ?? {} },
        );
        const want = expected(who, routeCase.permission);
        const got = answer.status >= 200 && answer.status < 300 ? 'ok' : answer.status;
        if (got !== want)
          failures.push(`${route} as ${who}: ${answer.status} ${answer.text.slice(0, 120)}, expected ${want}`);
        if (want === 403 && got === 403 && !/^(Viewers cannot|Only the owner can)/.test(answer.json?.message ?? ''))
          failures.push(`${route} as ${who}: 403 without the role's sentence: ${answer.text.slice(0, 120)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('the team through the site', () => {
  it('lists the app with the member role, lists the team, and lets a member leave', async () => {
    const { appName } = await team();
    const listed = (await clients.viewer.get('/api/apps')).json as { app_name: string; role: string }[];
    expect(listed.find((app) => app.app_name === appName)?.role).toBe('viewer');
    const members = (await clients.editor.get(`/api/apps/${appName}/members`)).json;
    expect(members.role).toBe('editor');
    expect(members.members.map((member: { role: string; name: string | null }) => [member.role, member.name])).toEqual([
      ['owner', null],
      ['editor', 'Bob'],
      ['viewer', 'Carol'],
      ['viewer', 'Erin'],
    ]);
    // no Telegram id in what members see
    expect(JSON.stringify(members)).not.toContain(String(BOB.id));
    expect((await clients.viewer.delete(`/api/apps/${appName}/members/me`)).status).toBe(204);
    expect((await clients.viewer.get(`/api/apps/${appName}`)).status).toBe(404);
    expect((await clients.owner.delete(`/api/apps/${appName}/members/me`)).json.message).toContain('transfer the app');
  });

  it('makes an invite link once and refuses bad roles; a used or expired code is told', async () => {
    const { appName } = await team();
    expect((await clients.owner.post(`/api/apps/${appName}/invites`, { role: 'owner' })).status).toBe(400);
    const invite = (await clients.owner.post(`/api/apps/${appName}/invites`, { role: 'editor' })).json;
    expect(invite).toMatchObject({ app_name: appName, role: 'editor' });
    expect(invite.start).toMatch(/^\/start join_[A-Za-z0-9_-]{22}$/);
    const code = invite.start.slice('/start join_'.length);
    const { members } = service.services;
    await expect(members.acceptInvite(code, String(ALICE.id))).rejects.toMatchObject({ code: 'own_app' });
    await members.acceptInvite(code, String(DAVE.id), 'Dave');
    await expect(members.acceptInvite(code, String(DAVE.id))).rejects.toMatchObject({ code: 'invite_used' });
    const expiring = await members.createInvite(appName, 'viewer', aliceActor);
    await service.store.prisma.appInvite.updateMany({ where: { usedAt: null }, data: { expiresAt: new Date(0) } });
    await expect(members.acceptInvite(expiring.code, String(ADMIN.id))).rejects.toMatchObject({
      code: 'invite_expired',
    });
    expect((await clients.stranger.get(`/api/apps/${appName}`)).json.role).toBe('editor');
    // nothing in the tables holds a raw Telegram id
    const rows = JSON.stringify(await service.store.prisma.appMember.findMany());
    for (const user of [BOB, CAROL, DAVE]) expect(rows).not.toContain(String(user.id));
  });

  it('hands the app over: the member owns it, the owner before becomes an editor; audited', async () => {
    const { appName, erin } = await team();
    const moved = await clients.owner.post(`/api/apps/${appName}/transfer`, { ref: erin });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.json.role).toBe('editor');
    const { members } = service.services;
    const erinActor: Actor = { surface: 'site', telegramId: String(ERIN.id) };
    expect((await service.services.registry.getApp(appName, erinActor)).role).toBe('owner');
    expect((await clients.owner.delete(`/api/apps/${appName}`)).json.message).toBe(
      'Only the owner can delete this app.',
    );
    expect((await members.list(appName, erinActor)).members.map((member) => member.role)).toEqual([
      'owner',
      'editor',
      'viewer',
      'editor',
    ]);
    const audit = await service.store.prisma.auditLog.findMany({ where: { appName }, select: { action: true } });
    expect(audit.map((entry) => entry.action)).toEqual(
      expect.arrayContaining(['member.invite', 'member.join', 'app.transfer']),
    );
  });
});

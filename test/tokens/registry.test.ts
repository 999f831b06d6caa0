// Who may see and change which app: owners, other users, administrators; domain edits and deletion take
// effect on ingestion at once, and every change lands in the audit log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_PLANE_TABLES } from '../../src/events/write/event-plane.ts';
import { OPERATOR, type Actor } from '../../src/tokens/registry.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
const alice: Actor = { surface: 'bot', telegramId: '1001' };
const bob: Actor = { surface: 'bot', telegramId: '2002' };
const admin: Actor = { surface: 'bot', telegramId: '9009', isAdmin: true };

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.close());

const registry = () => service.services.registry;

async function create(appName: string, owner: Actor, domain = 'app.example.com') {
  return registry().createApp(
    { appName, bot: '@owned_bot', domains: [domain], ownerTelegramId: owner.telegramId },
    owner,
  );
}

describe('authorisation', () => {
  it('shows users only their own apps and hides other apps as "not found"', async () => {
    const { app } = await create('alice_app', alice);
    expect((await registry().listApps(alice)).map((entry) => entry.appName)).toContain('alice_app');
    expect((await registry().listApps(bob)).map((entry) => entry.appName)).not.toContain('alice_app');
    expect((await registry().listApps({ surface: 'site' })).length).toBe(0);
    for (const attempt of [
      () => registry().getApp('alice_app', bob),
      () => registry().getAppById(app.appId, bob),
      () => registry().revoke('alice_app', bob),
      () => registry().regenerate('alice_app', bob),
      () => registry().addDomain('alice_app', 'evil.example', bob),
      () => registry().removeDomain('alice_app', 'app.example.com', bob),
      () => registry().deleteApp('alice_app', bob),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: 'app_not_found' });
    }
    expect((await registry().getApp('alice_app', alice)).tokenPrefix).not.toBeNull();
  });

  it('lets administrators find and change any app, marked as admin actions in the audit log', async () => {
    await create('watched_app', alice);
    expect((await registry().listApps(admin, { ownerTelegramId: '1001' })).map((entry) => entry.appName)).toContain(
      'watched_app',
    );
    expect((await registry().listApps(admin, { appName: 'watched_app' })).length).toBe(1);
    const revoked = await registry().revoke('watched_app', admin);
    expect(revoked.tokenPrefix).toBeNull();
    const entries = await service.store.prisma.auditLog.findMany({
      where: { appName: 'watched_app' },
      orderBy: { id: 'asc' },
    });
    expect(
      entries.map((entry) => [
        entry.action,
        entry.surface,
        (entry.detail as { admin?: boolean } | null)?.admin ?? null,
      ]),
    ).toEqual([
      ['app.create', 'bot', null],
      ['token.revoke', 'bot', true],
    ]);
    expect(entries[1]!.actorKey).toBe(registry().ownerKey('9009'));
  });
});

describe('changes reach ingestion at once', () => {
  it('adds and removes domains; the last one cannot be removed', async () => {
    const { token } = await create('domains_app', alice);
    expect(
      (await postEvents(service.url, makeEvent('domains_app'), { token, origin: 'https://new.example.com' })).status,
    ).toBe(403);
    await registry().addDomain('domains_app', 'new.example.com', alice);
    expect(
      (await postEvents(service.url, makeEvent('domains_app'), { token, origin: 'https://new.example.com' })).status,
    ).toBe(201);
    await expect(registry().addDomain('domains_app', 'new.example.com', alice)).rejects.toMatchObject({
      code: 'domain_exists',
    });
    await registry().removeDomain('domains_app', 'app.example.com', alice);
    expect(
      (await postEvents(service.url, makeEvent('domains_app'), { token, origin: 'https://app.example.com' })).status,
    ).toBe(403);
    await expect(registry().removeDomain('domains_app', 'new.example.com', alice)).rejects.toMatchObject({
      code: 'last_domain',
    });
  });

  it('deletes an app with its events; its token stops working and the audit log keeps the deletion', async () => {
    const { token, app } = await create('doomed_app', alice);
    expect((await postEvents(service.url, makeEvent('doomed_app'), { token })).status).toBe(201);
    await registry().deleteApp('doomed_app', alice);
    expect((await postEvents(service.url, makeEvent('doomed_app'), { token })).text).toBe(
      '{"message":"Token is invalid."}',
    );
    await service.services.purger.idle();
    for (const table of EVENT_PLANE_TABLES) {
      const [rows] = await service.store.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${table} WHERE app_id = $1`,
        [app.appId],
      );
      expect(rows!.n, table).toBe(0);
    }
    expect(await service.store.prisma.auditLog.count({ where: { appName: 'doomed_app', action: 'app.delete' } })).toBe(
      1,
    );
    await expect(registry().getApp('doomed_app', OPERATOR)).rejects.toMatchObject({ code: 'app_not_found' });
  });
});

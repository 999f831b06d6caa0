// Keys have owners, on both engines: lists name who made each read key, server key and public link; removing a member
// revokes what they made at once, as the bot, the site and the CLI say first; two transfers at once answer one success
// and one 409; a member made owner and back keeps their name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Actor, OPERATOR } from '../../src/tokens/registry.ts';
import { ServerKeys } from '../../src/tokens/server-keys.ts';
import { alertsOf, BotHarness, textsOf } from '../helpers/bot-harness.ts';
import { runCli } from '../helpers/cli.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND } from '../helpers/stores.ts';
import { create } from '../site/api-harness.ts';
import { SiteClient, startSiteService, type TelegramUser } from '../site/site-harness.ts';

const ALICE: TelegramUser = { id: 1001, first_name: 'Alice', username: 'alice' };
const BOB: TelegramUser = { id: 2002, first_name: 'Bob', username: 'bob' };
const CAROL: TelegramUser = { id: 3003, first_name: 'Carol', username: 'carol' };
const alice: Actor = { surface: 'site', telegramId: String(ALICE.id) };

describe(`keys have owners on ${SERVICE_BACKEND.name}`, () => {
  let service: TestService;
  let drop: () => Promise<void>;
  let owner: SiteClient;
  let apps = 0;

  beforeAll(async () => {
    const backend = await SERVICE_BACKEND.open();
    drop = backend.drop;
    service = await startSiteService({ ...backend.env, RATE_LIMIT_MAX: '100000' });
    expectProjectStore(service.store);
    owner = await SiteClient.signedIn(service.url, ALICE);
  });
  afterAll(async () => {
    await service?.close();
    await drop?.();
  });

  /** a new app of Alice's with Bob (and Carol) as editors; answers its name and the members' references */
  async function team(withCarol = false): Promise<{ appName: string; bob: string; carol: string }> {
    const appName = `makers_${++apps}`;
    await create(owner, appName);
    const { members } = service.services;
    for (const user of withCarol ? [BOB, CAROL] : [BOB]) {
      const { code } = await members.createInvite(appName, 'editor', alice);
      await members.acceptInvite(code, String(user.id), user.first_name);
    }
    const listed = (await members.list(appName, alice)).members;
    const ref = (name: string) => listed.find((member) => member.name === name)?.ref ?? '';
    return { appName, bob: ref('Bob'), carol: ref('Carol') };
  }

  it('names who made each key and link, and removing a member revokes what they made at once, as it says', async () => {
    const { appName, bob: bobRef } = await team();
    const bob = await SiteClient.signedIn(service.url, BOB);
    const readKey = (await bob.post(`/api/apps/${appName}/read-keys`, {})).json.key as string;
    const serverKey = (await bob.post(`/api/apps/${appName}/server-keys`, {})).json.key as string;
    const shared = await bob.post(`/api/apps/${appName}/share`, {});
    expect(shared.status, shared.text).toBe(201);
    const secret = (shared.json.url as string).split('/share/')[1]!;
    const ownKey = (await owner.post(`/api/apps/${appName}/read-keys`, {})).json.key as string;

    const read = (key: string) =>
      fetch(`${service.url}/api/v1/apps/${appName}/summary`, { headers: { authorization: `Bearer ${key}` } });
    const send = (key: string) =>
      postEvents(service.url, makeEvent(appName, { event_name: 'bot-command' }), {
        origin: null,
        headers: { authorization: `Bearer ${key}` },
      });
    const open = () => fetch(`${service.url}/api/share/${secret}/dashboard?days=7`);
    // each works, and this node has the keys in its caches
    expect((await read(readKey)).status).toBe(200);
    expect((await send(serverKey)).status).toBe(201);
    expect((await open()).status).toBe(200);

    // every list names the maker
    const bobMade = { ref: bobRef, name: 'Bob', role: 'editor' };
    const readKeys = (await owner.get(`/api/apps/${appName}/read-keys`)).json;
    expect(readKeys.map((key: { made_by: unknown }) => key.made_by)).toEqual([
      { ref: expect.stringMatching(/^[A-Za-z0-9_-]{12}$/), name: null, role: 'owner' },
      bobMade,
    ]);
    expect((await owner.get(`/api/apps/${appName}/server-keys`)).json[0].made_by).toEqual(bobMade);
    expect((await owner.get(`/api/apps/${appName}/share`)).json.link.made_by).toEqual(bobMade);
    const listed = await runCli(service, 'server-keys', 'list', '--app-name', appName);
    expect(listed.stdout).toContain(`by Bob (editor, ${bobRef})\tactive`);
    const harness = new BotHarness(service.services);
    const { appId } = await service.services.registry.getApp(appName, OPERATOR);
    expect(textsOf(await harness.click(ALICE.id, `rk:${appId}`))).toContain('by Bob (editor');
    expect(textsOf(await harness.click(ALICE.id, `share:${appId}`))).toContain('by Bob (editor');

    // what the owner is asked before removing Bob, in the site's list and the bot
    const members = (await owner.get(`/api/apps/${appName}/members`)).json.members;
    expect(members.find((member: { ref: string }) => member.ref === bobRef).made).toEqual({
      keys: 2,
      share_link: true,
    });
    expect(textsOf(await harness.click(ALICE.id, `mdel:${appId}:${bobRef}`))).toContain(
      'and it revokes the 2 keys and the public link they made.',
    );
    expect(alertsOf(await harness.click(ALICE.id, `mdel!:${appId}:${bobRef}`))).toContain(
      'Removed; the 2 keys and the public link they made revoked',
    );

    // refused at once, as revoked keys are; the owner's own key keeps working
    expect((await read(readKey)).status).toBe(401);
    const refused = await send(serverKey);
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({ message: 'Token is invalid.' });
    expect((await open()).status).toBe(404);
    expect((await read(ownKey)).status).toBe(200);
    const after = (await owner.get(`/api/apps/${appName}/read-keys`)).json;
    expect(after.find((key: { made_by: { ref: string } }) => key.made_by.ref === bobRef)).toMatchObject({
      revoked_at: expect.any(String),
      made_by: { ref: bobRef, role: 'former' },
    });
    expect((await owner.get(`/api/apps/${appName}/share`)).json).toEqual({ link: null });
  });

  it("another node refuses a removed member's key once its cached answer is older than the cache's time", async () => {
    const { appName, bob } = await team();
    const { key } = await service.services.serverKeys.create(appName, { surface: 'bot', telegramId: String(BOB.id) });
    // another node's server keys: the same store, a cache of its own
    let clock = Date.now();
    const elsewhere = new ServerKeys(service.store.prisma, service.services.registry, { now: () => clock });
    expect(await elsewhere.authenticate(key)).toMatchObject({ appName });
    await service.services.members.remove(appName, bob, alice);
    expect(await service.services.serverKeys.authenticate(key)).toBeNull();
    // past the cache's time (and its background refresh): the other node asks its store again
    clock += 10_000;
    await expect.poll(() => elsewhere.authenticate(key)).toBeNull();
  });

  it('the CLI says what removing a member revokes, and the operator names what they made', async () => {
    const { appName, bob } = await team();
    const bobActor: Actor = { surface: 'bot', telegramId: String(BOB.id) };
    await service.services.serverKeys.create(appName, bobActor);
    await service.services.readKeys.create(appName, OPERATOR);
    const listed = await runCli(service, 'read-keys', 'list', '--app-name', appName);
    expect(listed.stdout).toContain('by the operator\tactive');
    const removed = await runCli(service, 'members', 'remove', '--app-name', appName, '--member', bob);
    expect(removed.stdout).toBe(`Removed Bob (${bob}, editor) from ${appName} and revoked the key they made.\n`);
    const keys = await runCli(service, 'server-keys', 'list', '--app-name', appName, '--json');
    expect(keys.json).toEqual([expect.objectContaining({ revoked_at: expect.any(String) })]);
    // the operator's key is no member's: it stays
    const reads = await runCli(service, 'read-keys', 'list', '--app-name', appName, '--json');
    expect(reads.json).toEqual([
      expect.objectContaining({ revoked_at: null, made_by: { ref: null, name: null, role: 'operator' } }),
    ]);
  });

  it('of two transfers at once, one is made and the other answers 409, on the site and in the CLI', async () => {
    const { appName, bob, carol } = await team(true);
    const [first, second] = await Promise.all([
      owner.post(`/api/apps/${appName}/transfer`, { ref: bob }),
      owner.post(`/api/apps/${appName}/transfer`, { ref: carol }),
    ]);
    const answers = [first, second].sort((a, b) => a.status - b.status);
    expect(
      answers.map((answer) => answer.status),
      answers.map((answer) => answer.text).join(' '),
    ).toEqual([200, 409]);
    expect(answers[1]!.json).toEqual({
      message: `The team of ${appName} changed meanwhile: nothing changed. Look at it again.`,
    });
    const roles = (await service.services.members.list(appName, OPERATOR)).members.map((member) => member.role);
    expect(roles.sort()).toEqual(['editor', 'editor', 'owner']);

    // the operator, twice at once
    const { members } = await service.services.members.list(appName, OPERATOR);
    const editors = members.filter((member) => member.role === 'editor').map((member) => member.ref);
    const runs = await Promise.all(
      editors.map((ref) => runCli(service, 'members', 'transfer', '--app-name', appName, '--member', ref)),
    );
    expect(runs.map((run) => run.exitCode).sort()).toEqual([0, 1]);
    expect(runs.find((run) => run.exitCode === 1)!.stderr).toBe(
      `The team of ${appName} changed meanwhile: nothing changed. Look at it again.\n`,
    );

    // the owner pressing "Yes, hand it over" on two screens at once in the bot: the second is told in words
    const { members: now } = await service.services.members.list(appName, OPERATOR);
    const ownerNow = now.find((member) => member.role === 'owner')!;
    const ownerId = [ALICE, BOB, CAROL].find((user) => user.first_name === ownerNow.name)?.id ?? ALICE.id;
    const { appId } = await service.services.registry.getApp(appName, OPERATOR);
    const harness = new BotHarness(service.services);
    const others = now.filter((member) => member.role === 'editor').map((member) => member.ref);
    const pressed = await Promise.all(others.map((ref) => harness.click(ownerId, `xfer!:${appId}:${ref}`)));
    const alerts = pressed.flatMap(alertsOf);
    expect(alerts).toContain('Handed over');
    expect(
      alerts.some((text) => /changed meanwhile|Only the owner can transfer/.test(text)),
      alerts.join(' | '),
    ).toBe(true);
  });

  it('a member made owner and back keeps their name', async () => {
    const { appName, bob } = await team();
    const bobActor: Actor = { surface: 'site', telegramId: String(BOB.id) };
    await service.services.members.transfer(appName, bob, alice);
    const asOwner = (await service.services.members.list(appName, bobActor)).members;
    expect(asOwner[0]).toMatchObject({ ref: bob, role: 'owner', name: 'Bob' });
    const aliceRef = asOwner[1]!.ref;
    await service.services.members.transfer(appName, aliceRef, bobActor);
    const back = (await owner.get(`/api/apps/${appName}/members`)).json.members;
    expect(back.map((member: { name: string | null; role: string }) => [member.name, member.role])).toEqual([
      [null, 'owner'],
      ['Bob', 'editor'],
    ]);
  });
});

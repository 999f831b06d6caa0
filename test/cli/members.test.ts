// The operator CLI's members commands, in process: an invite the teammate sends the management bot, the team listed
// with the references the other commands take, a transfer and a removal (audited, the removed owner's alerts gone),
// an app without an owner, and the refusals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BotHarness, textsOf } from '../helpers/bot-harness.ts';
import { runCli, START_TIMEOUT_MS } from '../helpers/cli.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const OWNER = '1001';
const TEAMMATE = 2002;
/** what a member made that still works: here, nothing */
const NOTHING = { keys: 0, share_link: false };
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

let service: TestService;
const cli = (...argv: string[]) => runCli(service, ...argv);

/** an app its owner registered in the bot, whose chat is told about the app as the bot's registration does */
async function ownedApp(appName: string): Promise<number> {
  const { app } = await service.services.registry.createApp(
    { appName, bot: '@cli_team_bot', domains: ['team.example.com'], ownerTelegramId: OWNER },
    { surface: 'bot', telegramId: OWNER },
  );
  await service.services.alertSubscriptions.subscribe(app.appId, OWNER);
  return app.appId;
}

beforeAll(async () => {
  service = await startTestService();
}, START_TIMEOUT_MS);
afterAll(() => service?.close());

describe('members commands', () => {
  it('invites a teammate through the bot, lists the team, hands the app over and removes the old owner', async () => {
    const appId = await ownedApp('cli_team');
    const invite = await cli('members', 'invite', '--app-name', 'cli_team', '--role', 'editor', '--json');
    expect(invite.exitCode).toBe(0);
    expect(invite.json).toEqual({
      app_name: 'cli_team',
      role: 'editor',
      start: expect.stringMatching(/^\/start join_[A-Za-z0-9_-]{22}$/),
      expires_at: expect.stringMatching(ISO),
    });
    // what the teammate sends the management bot joins the team
    const harness = new BotHarness(service.services);
    expect(textsOf(await harness.send(TEAMMATE, invite.json.start))).toContain('cli_team');

    const listed = await cli('members', 'list', '--app-name', 'cli_team', '--json');
    expect(listed.json.app_name).toBe('cli_team');
    expect(listed.json.members).toEqual([
      {
        ref: expect.stringMatching(/^[A-Za-z0-9_-]{12}$/),
        role: 'owner',
        name: null,
        added_at: null,
        you: false,
        made: NOTHING,
      },
      {
        ref: expect.stringMatching(/^[A-Za-z0-9_-]{12}$/),
        role: 'editor',
        name: `User${TEAMMATE}`,
        added_at: expect.stringMatching(ISO),
        you: false,
        made: NOTHING,
      },
    ]);
    const [owner, bob] = listed.json.members;
    const text = await cli('members', 'list', '--app-name', 'cli_team');
    expect(text.stdout).toContain(`${owner.ref}\towner\t-\n`);
    expect(text.stdout).toContain(`${bob.ref}\teditor\tUser${TEAMMATE}\tjoined `);

    // the owner cannot be removed before the app has another owner
    const refused = await cli('members', 'remove', '--app-name', 'cli_team', '--member', owner.ref, '--json');
    expect(refused.exitCode).toBe(1);
    expect(refused.json.error).toBe('The owner cannot leave or be removed: transfer the app first.');

    const transferred = await cli('members', 'transfer', '--app-name', 'cli_team', '--member', bob.ref, '--json');
    expect(transferred.json).toEqual({ app_name: 'cli_team', member: { ...bob, role: 'owner' } });
    const app = await service.services.registry.getApp('cli_team', { surface: 'bot', telegramId: String(TEAMMATE) });
    expect(app.role).toBe('owner');

    // the owner before is an editor now, under the same reference; then removed
    const after = (await cli('members', 'list', '--app-name', 'cli_team', '--json')).json.members;
    expect(after.map((member: { ref: string; role: string }) => [member.ref, member.role])).toEqual([
      [bob.ref, 'owner'],
      [owner.ref, 'editor'],
    ]);
    const removed = await cli('members', 'remove', '--app-name', 'cli_team', '--member', owner.ref, '--json');
    expect(removed.json).toMatchObject({ app_name: 'cli_team', member: { ref: owner.ref, role: 'editor' } });
    // nor does the bot warn them about it any more: their chat's subscription went with them
    expect(await service.store.prisma.alertSubscription.count({ where: { appId } })).toBe(0);
    await expect(
      service.services.registry.getApp('cli_team', { surface: 'bot', telegramId: OWNER }),
    ).rejects.toMatchObject({ code: 'app_not_found' });

    const audit = await service.store.prisma.auditLog.findMany({
      where: { appName: 'cli_team', action: { in: ['member.invite', 'member.join', 'app.transfer', 'member.remove'] } },
      orderBy: { id: 'asc' },
    });
    expect(audit.map((entry) => entry.action)).toEqual([
      'member.invite',
      'member.join',
      'app.transfer',
      'member.remove',
    ]);
  });

  it('lists and hands over an app registered without an owner', async () => {
    await service.createApp('cli_ownerless');
    expect((await cli('members', 'list', '--app-name', 'cli_ownerless')).stdout).toBe('No owner or members.\n');
    const invite = await cli('members', 'invite', '--app-name', 'cli_ownerless', '--role', 'viewer', '--json');
    await new BotHarness(service.services).send(3003, invite.json.start);
    const [viewer] = (await cli('members', 'list', '--app-name', 'cli_ownerless', '--json')).json.members;
    expect(viewer).toMatchObject({ role: 'viewer', name: 'User3003' });
    const transferred = await cli('members', 'transfer', '--app-name', 'cli_ownerless', '--member', viewer.ref);
    expect(transferred.stdout).toBe(`${viewer.ref} now owns cli_ownerless.\n`);
    expect((await cli('members', 'list', '--app-name', 'cli_ownerless', '--json')).json.members).toEqual([
      // the name they joined with stays theirs as the owner
      { ...viewer, role: 'owner', added_at: null },
    ]);
    // a second hand-over names the owner before
    const next = await cli('members', 'invite', '--app-name', 'cli_ownerless', '--role', 'editor', '--json');
    await new BotHarness(service.services).send(3004, next.json.start);
    const [, editor] = (await cli('members', 'list', '--app-name', 'cli_ownerless', '--json')).json.members;
    const again = await cli('members', 'transfer', '--app-name', 'cli_ownerless', '--member', editor.ref);
    expect(again.stdout).toBe(`${editor.ref} now owns cli_ownerless; ${viewer.ref}, its owner before, is an editor.\n`);
  });

  it('refuses a missing or unknown role, an unknown member and an unknown app, and changes nothing', async () => {
    await ownedApp('cli_refusing');
    const before = (await cli('members', 'list', '--app-name', 'cli_refusing', '--json')).json;
    const invites = await service.store.prisma.appInvite.count();
    const noRole = await cli('members', 'invite', '--app-name', 'cli_refusing', '--json');
    expect(noRole).toMatchObject({ exitCode: 2, json: { error: '--role takes viewer or editor' } });
    const owner = await cli('members', 'invite', '--app-name', 'cli_refusing', '--role', 'owner', '--json');
    expect(owner).toMatchObject({ exitCode: 2, json: { error: '--role takes viewer or editor' } });
    const noMember = await cli('members', 'remove', '--app-name', 'cli_refusing', '--json');
    expect(noMember).toMatchObject({ exitCode: 2, json: { error: 'missing --member' } });
    // a reference may start with a dash (base64url): still the option's value
    const dashed = await cli('members', 'remove', '--app-name', 'cli_refusing', '--member', '-AAAAAAAAAAA', '--json');
    expect(dashed).toMatchObject({ exitCode: 1, json: { error: 'cli_refusing has no member -AAAAAAAAAAA.' } });
    const unknown = await cli(
      'members',
      'transfer',
      '--app-name',
      'cli_refusing',
      '--member',
      'AAAAAAAAAAAA',
      '--json',
    );
    expect(unknown).toMatchObject({ exitCode: 1, json: { error: 'cli_refusing has no member AAAAAAAAAAAA.' } });
    const noApp = await cli('members', 'list', '--app-name', 'no_such_app', '--json');
    expect(noApp.exitCode).toBe(1);
    expect((await cli('members', 'list', '--app-name', 'cli_refusing', '--json')).json).toEqual(before);
    expect(await service.store.prisma.appInvite.count()).toBe(invites);
  });
});

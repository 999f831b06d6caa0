// The team in the bot through bot.handleUpdate: every app button pressed by the owner, an editor, a viewer, a
// stranger and an administrator (allowed, refused with who may, or "not yours"), the buttons each role sees, an invite
// made and accepted through the /start deep link, used and expired links, removal, leaving and handing over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_ACTIONS, type AppAction } from '../../src/bot/actions.ts';
import { TEXT } from '../../src/bot/texts.ts';
import { refusal } from '../../src/tokens/policy.ts';
import type { Actor } from '../../src/tokens/registry.ts';
import { alertsOf, type ApiCall, BotHarness, buttonsOf, textsOf } from '../helpers/bot-harness.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const ALICE = 1001;
const BOB = 2002;
const CAROL = 3003;
const DAVE = 4004;
const ERIN = 5005;
const ADMIN = 9009;
/** the owner of the apps whose team news are told */
const FRANK = 6006;

type Who = 'owner' | 'editor' | 'viewer' | 'stranger' | 'administrator';
const USER: Record<Who, number> = { owner: ALICE, editor: BOB, viewer: CAROL, stranger: DAVE, administrator: ADMIN };

/** the least role each button takes, written out here so that the bot's table is checked, not restated */
const LEAST: Record<AppAction, 'viewer' | 'editor' | 'owner'> = {
  app: 'viewer',
  leave: 'viewer',
  'leave!': 'viewer',
  rev: 'editor',
  'rev!': 'editor',
  regen: 'editor',
  'regen!': 'editor',
  dom: 'editor',
  domadd: 'editor',
  domdel: 'editor',
  botid: 'editor',
  cat: 'editor',
  rk: 'editor',
  rknew: 'editor',
  rkrev: 'editor',
  'rkrev!': 'editor',
  sk: 'editor',
  sknew: 'editor',
  skrev: 'editor',
  'skrev!': 'editor',
  share: 'editor',
  'share!': 'editor',
  'unshare!': 'editor',
  team: 'editor',
  data: 'owner',
  ret: 'owner',
  'ret!': 'owner',
  erase: 'owner',
  'erase!': 'owner',
  inv: 'owner',
  mdel: 'owner',
  'mdel!': 'owner',
  xfer: 'owner',
  'xfer!': 'owner',
  del: 'owner',
  'del!': 'owner',
};
const RANK = { viewer: 0, editor: 1, owner: 2 };

/** buttons whose press leaves the app unusable for the next presser: each gets a new team */
const DESTRUCTIVE = new Set<AppAction>(['del!', 'xfer!', 'mdel!', 'leave!']);

let service: TestService;
let harness: BotHarness;
let apps = 0;
const alice: Actor = { surface: 'bot', telegramId: String(ALICE) };

beforeAll(async () => {
  service = await startTestService({ ADMIN_TELEGRAM_IDS: String(ADMIN), PUBLIC_URL: 'https://analytics.example.net/' });
  harness = new BotHarness(service.services);
});
afterAll(() => service?.close());

/** a new app of Alice's with Bob as editor, Carol and Erin as viewers */
async function team(): Promise<{ appName: string; id: number; erin: string }> {
  const appName = `bot_team_${++apps}`;
  const { app } = await service.services.registry.createApp(
    { appName, bot: `@${appName}_bot`, domains: ['team.example.com'], ownerTelegramId: String(ALICE) },
    alice,
  );
  const { members } = service.services;
  for (const [user, role, name] of [
    [BOB, 'editor', 'Bob'],
    [CAROL, 'viewer', 'Carol'],
    [ERIN, 'viewer', 'Erin'],
  ] as const) {
    const { code } = await members.createInvite(appName, role, alice);
    await members.acceptInvite(code, String(user), name);
  }
  const erin = (await members.list(appName, alice)).members.find((member) => member.name === 'Erin')!.ref;
  return { appName, id: app.appId, erin };
}

/** the messages of a step sent to one user's private chat */
const toChat = (calls: ApiCall[], user: number) =>
  calls.filter((call) => call.method === 'sendMessage' && String(call.payload.chat_id) === String(user));

/** the extra part a button's data carries, when it needs one that names something real */
async function extraOf(action: AppAction, appName: string, erin: string): Promise<string | undefined> {
  const operator: Actor = { surface: 'cli', isAdmin: true };
  switch (action) {
    case 'domdel':
      return '0';
    case 'rkrev':
    case 'rkrev!':
      return (await service.services.readKeys.create(appName, operator)).readKey.prefix.slice('tma_read_'.length);
    case 'skrev':
    case 'skrev!':
      return (await service.services.serverKeys.create(appName, operator)).readKey.prefix.slice('tma_server_'.length);
    case 'ret':
    case 'ret!':
      return '365';
    case 'erase!':
      return 'AAAAAAAAAAAAAAAAAAAAAA';
    case 'inv':
      return 'viewer';
    case 'mdel':
    case 'mdel!':
    case 'xfer':
    case 'xfer!':
      return erin;
    default:
      return undefined;
  }
}

describe('app buttons by role', () => {
  it('has an expectation for every app button', () => {
    expect(Object.keys(LEAST).sort()).toEqual(Object.keys(APP_ACTIONS).sort());
  });

  it('lets each role press what the policy allows, tells members who may, and hides the app from strangers', async () => {
    const shared = await team();
    const failures: string[] = [];
    for (const action of Object.keys(APP_ACTIONS) as AppAction[]) {
      for (const who of Object.keys(USER) as Who[]) {
        const { appName, id, erin } = DESTRUCTIVE.has(action) ? await team() : shared;
        const extra = await extraOf(action, appName, erin);
        const calls = await harness.click(USER[who], `${action}:${id}${extra === undefined ? '' : `:${extra}`}`);
        // a dialog the press opened is left, so the next press is a press again
        await harness.send(USER[who], '/cancel');
        const told = alertsOf(calls);
        // what a refused member is told: the sentence of the permission the button takes
        const refused = refusal(APP_ACTIONS[action]);
        const want =
          who === 'stranger'
            ? 'hidden'
            : who === 'administrator' || who === 'owner' || RANK[who] >= RANK[LEAST[action]]
              ? 'allowed'
              : 'refused';
        const got = told.includes(TEXT.notYours) ? 'hidden' : told.includes(refused) ? 'refused' : 'allowed';
        if (got !== want) failures.push(`${action} as ${who}: ${got} (${told.join(' | ')}), expected ${want}`);
        if (got !== 'allowed') expect(textsOf(calls), action).toBe('');
      }
    }
    expect(harness.errors).toEqual([]);
    expect(failures).toEqual([]);
  });

  it('shows each role only its buttons, and members their role', async () => {
    const { id } = await team();
    const owner = buttonsOf(await harness.click(ALICE, `app:${id}`));
    expect(owner).toEqual(
      expect.arrayContaining([`regen:${id}`, `dom:${id}`, `team:${id}`, `data:${id}`, `del:${id}`]),
    );
    expect(owner).not.toContain(`leave:${id}`);
    const editor = buttonsOf(await harness.click(BOB, `app:${id}`));
    expect(editor).toEqual(expect.arrayContaining([`regen:${id}`, `dom:${id}`, `rk:${id}`, `sk:${id}`, `team:${id}`]));
    expect(editor).not.toContain(`del:${id}`);
    expect(editor).not.toContain(`data:${id}`);
    const viewerCalls = await harness.click(CAROL, `app:${id}`);
    expect(buttonsOf(viewerCalls).filter((data) => data.endsWith(`:${id}`))).toEqual([
      `alerts:app:${id}`,
      `leave:${id}`,
    ]);
    expect(textsOf(viewerCalls)).toContain('Your role: viewer');
    expect(textsOf(await harness.click(CAROL, 'menu:apps'))).toContain('Your role: viewer');
    // the editor sees the team, without invite, remove or transfer buttons
    const editorTeam = await harness.click(BOB, `team:${id}`);
    expect(textsOf(editorTeam)).toContain('Carol (viewer)');
    expect(buttonsOf(editorTeam)).toEqual([`app:${id}`]);
  });
});

describe('invites and the team', () => {
  it('invites through a deep link that joins once; a used or expired link is told', async () => {
    const { id, appName } = await team();
    const made = textsOf(await harness.click(ALICE, `inv:${id}:editor`));
    const code = /start=join_([A-Za-z0-9_-]{22})/.exec(made)?.[1];
    expect(made).toContain('https://t.me/tma_analytics_test_bot?start=join_');
    expect(code).toBeDefined();
    expect(textsOf(await harness.send(ALICE, `/start join_${code}`))).toContain('You own this app');
    expect(textsOf(await harness.send(DAVE, `/start join_${code}`))).toContain(
      `You joined <b>${appName}</b> as editor`,
    );
    expect(textsOf(await harness.send(ADMIN, `/start join_${code}`))).toContain('already used');
    expect(textsOf(await harness.send(DAVE, '/start join_nonsense'))).toContain('not valid');
    const later = textsOf(await harness.click(ALICE, `inv:${id}:viewer`));
    await service.store.prisma.appInvite.updateMany({ where: { usedAt: null }, data: { expiresAt: new Date(0) } });
    const expired = /start=join_([A-Za-z0-9_-]{22})/.exec(later)![1];
    expect(textsOf(await harness.send(ADMIN, `/start join_${expired}`))).toContain('expired');
    expect(textsOf(await harness.send(DAVE, '/start'))).toContain('Open <b>Analytics</b>');
  });

  it('tells the owner in the bot who joined through an invite link and who left, naming the app and the role', async () => {
    // an owner of their own, so the apps made here count against no one else's limit
    const owner: Actor = { surface: 'bot', telegramId: String(FRANK) };
    const made = async (appName: string) =>
      (
        await service.services.registry.createApp(
          { appName, bot: `@${appName}_bot`, domains: ['news.example.com'], ownerTelegramId: String(FRANK) },
          owner,
        )
      ).app.appId;
    const inviteOf = async (id: number, role: string) =>
      /start=join_([A-Za-z0-9_-]{22})/.exec(textsOf(await harness.click(FRANK, `inv:${id}:${role}`)))![1];
    const id = await made('team_news');
    // the chat that registers an app in the bot is its owner's alert chat: where the owner is told
    await service.services.alertSubscriptions.subscribe(id, String(FRANK));
    const joined = await harness.send(DAVE, `/start join_${await inviteOf(id, 'viewer')}`);
    expect(textsOf(toChat(joined, DAVE))).toContain('You joined <b>team_news</b> as viewer');
    expect(textsOf(toChat(joined, FRANK))).toBe(
      `👥 User${DAVE} joined <b>team_news</b> as viewer through your invite link.`,
    );
    expect(buttonsOf(toChat(joined, FRANK))).toEqual([`team:${id}`]);
    await service.services.members.acceptInvite(
      (await service.services.members.createInvite('team_news', 'editor', owner)).code,
      String(BOB),
      'Bob',
    );
    await harness.click(BOB, `rknew:${id}`);
    const left = await harness.click(BOB, `leave!:${id}`);
    expect(textsOf(toChat(left, FRANK))).toBe(
      '🚪 Bob (editor) left the team of <b>team_news</b>; the key they made is revoked.',
    );
    // an owner whose chat the bot does not know is not told, and the member's step is done all the same
    const quiet = await made('team_news_quiet');
    const unheard = await harness.send(DAVE, `/start join_${await inviteOf(quiet, 'editor')}`);
    expect(textsOf(unheard)).toContain('You joined <b>team_news_quiet</b> as editor');
    expect(toChat(unheard, FRANK)).toEqual([]);
    expect(harness.errors).toEqual([]);
  });

  it('removes a member (asking first), lets a member leave, and hands the app over', async () => {
    const { id, erin, appName } = await team();
    expect(buttonsOf(await harness.click(ALICE, `mdel:${id}:${erin}`))).toEqual([`mdel!:${id}:${erin}`, `team:${id}`]);
    await harness.click(ALICE, `mdel!:${id}:${erin}`);
    expect(alertsOf(await harness.click(ERIN, `app:${id}`))).toEqual([TEXT.notYours]);
    await harness.click(CAROL, `leave!:${id}`);
    expect(alertsOf(await harness.click(CAROL, `app:${id}`))).toEqual([TEXT.notYours]);
    const bob = (await service.services.members.list(appName, alice)).members.find((member) => member.name === 'Bob')!;
    await harness.click(ALICE, `xfer!:${id}:${bob.ref}`);
    const bobActor: Actor = { surface: 'bot', telegramId: String(BOB) };
    expect((await service.services.registry.getAppById(id, bobActor)).role).toBe('owner');
    expect((await service.services.registry.getAppById(id, alice)).role).toBe('editor');
    expect(alertsOf(await harness.click(ALICE, `del:${id}`))).toEqual(['Only the owner can delete this app.']);
    expect(harness.errors).toEqual([]);
  });
});

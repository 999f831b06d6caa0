// The management bot through bot.handleUpdate: menus, the new-token dialog with bad and good answers,
// "My tokens" with last event and last rejection, revoke/regenerate/domains/delete, administrators,
// authorisation against forged callbacks, dialog state surviving a restart, odd updates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverKeyIssued } from '../../src/bot/server-key-actions.ts';
import { COMMANDS } from '../../src/bot/commands.ts';
import { appCard, readKeyIssued, TEXT, tokenIssued } from '../../src/bot/texts.ts';
import { SDK_PACKAGE_VERSION } from '../../src/sdk-serving/sdk-files.ts';
import { alertsOf, type ApiCall, BotHarness, buttonsOf, textsOf } from '../helpers/bot-harness.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const ALICE = 1001;
const BOB = 2002;
const ADMIN = 9009;
const CAROL = 3003;
/** a user of one test alone, who has no app of his own */
const DAVE = 4004;

let service: TestService;
let harness: BotHarness;

beforeAll(async () => {
  service = await startTestService({ ADMIN_TELEGRAM_IDS: String(ADMIN), PUBLIC_URL: 'https://analytics.example.net/' });
  harness = new BotHarness(service.services);
});
afterAll(() => service?.close());

function tokenIn(text: string): string {
  const match = /<code>(tma_[0-9A-Za-z]{40})<\/code>/.exec(text);
  expect(match, text).not.toBeNull();
  return match![1]!;
}

async function register(user: number, bot: string, domain: string, appName: string): Promise<string> {
  await harness.click(user, 'menu:new');
  await harness.send(user, bot);
  await harness.send(user, '/skip');
  await harness.send(user, domain);
  return tokenIn(textsOf(await harness.send(user, appName)));
}

/** the texts of the last `count` messages of a step: inside a dialog, the new ones come last */
function lastTexts(calls: Awaited<ReturnType<BotHarness['send']>>, count = 1): string {
  return textsOf(
    calls.filter((call) => call.method === 'sendMessage' || call.method === 'editMessageText').slice(-count),
  );
}

async function appId(appName: string): Promise<number> {
  return (await service.store.prisma.app.findUniqueOrThrow({ where: { appName } })).id;
}

describe('menus', () => {
  it('/start greets with an Analytics entry; Analytics offers New token and My tokens', async () => {
    const start = await harness.send(ALICE, '/start');
    expect(textsOf(start)).toContain('Open <b>Analytics</b>');
    expect(buttonsOf(start)).toEqual(['menu:analytics']);
    const analytics = await harness.click(ALICE, 'menu:analytics');
    expect(buttonsOf(analytics)).toEqual(['menu:new', 'menu:apps', '']);
    // the dashboards open inside Telegram as a Mini App (PUBLIC_URL is https)
    const keyboard = analytics.find((call) => call.method === 'editMessageText')!.payload.reply_markup as {
      inline_keyboard: { web_app?: { url: string } }[][];
    };
    expect(keyboard.inline_keyboard.flat().find((button) => button.web_app)?.web_app?.url).toBe(
      'https://analytics.example.net/webapp',
    );
    expect(alertsOf(analytics)).toEqual(['']); // the button press is answered
    expect(buttonsOf(await harness.send(ADMIN, '/analytics'))).toEqual(['menu:new', 'menu:apps', '', 'admin:apps']);
  });
});

describe('new token dialog', () => {
  it('explains each bad answer, asks again, and ends with the token and snippets', async () => {
    expect(textsOf(await harness.click(ALICE, 'menu:new'))).toContain("address of your mini app's bot");
    const badBot = textsOf(await harness.send(ALICE, 'https://example.com/shop'));
    expect(badBot).toContain('ending in "bot"');
    expect(badBot).toContain("address of your mini app's bot");
    expect(textsOf(await harness.send(ALICE, 't.me/alice_shop_bot'))).toContain("Send your bot's id");
    // the bot's token in place of its id: refused without a word of it kept, and taken out of the chat
    const pasted = await harness.send(ALICE, '7012345678:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw');
    expect(textsOf(pasted)).toContain("That is the bot's token");
    expect(textsOf(pasted)).not.toContain('AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw');
    expect(harness.calls.map((call) => call.method)).toContain('deleteMessage');
    expect(textsOf(await harness.send(ALICE, '@alice_shop_bot'))).toContain("The bot's id is a number");
    expect(textsOf(await harness.send(ALICE, '7012345678'))).toContain('Send the domain');
    const badDomain = textsOf(await harness.send(ALICE, '192.168.0.10'));
    expect(badDomain).toContain('not an IP address');
    expect(badDomain).toContain('Send the domain');
    expect(textsOf(await harness.send(ALICE, 'localhost'))).toContain('localhost is not accepted here');
    expect(textsOf(await harness.send(ALICE, 'https://Shop.Example.com/app?x=1'))).toContain('Send the app name');
    expect(textsOf(await harness.send(ALICE, 'Alice Shop'))).toContain('3–64 characters');
    const done = textsOf(await harness.send(ALICE, 'alice_shop'));
    const token = tokenIn(done);
    expect(done).toContain('<code>alice_shop</code>');
    expect(done).toContain('https://analytics.example.net/index.js');
    expect(done).toContain(`telegramAnalytics.init({ token: '${token}', appName: 'alice_shop' })`);
    expect(done).toContain('import { init } from');
    // the package installs from this service's tarball and is told where to send
    expect(done).toContain(
      `npm install https://analytics.example.net/sdk/tma-analytics-sdk-${SDK_PACKAGE_VERSION}.tgz`,
    );
    expect(done).toContain(
      `init({ token: '${token}', appName: 'alice_shop', endpoint: 'https://analytics.example.net' });`,
    );
    expect(done).not.toContain('YOUR-ANALYTICS-HOST');
    const app = await service.services.registry.getApp('alice_shop', { surface: 'bot', telegramId: String(ALICE) });
    expect(app).toMatchObject({ bot: '@alice_shop_bot', botId: '7012345678', domains: ['shop.example.com'] });
    expect(
      (await postEvents(service.url, makeEvent('alice_shop'), { token, origin: 'https://shop.example.com' })).status,
    ).toBe(201);
  });

  it('without PUBLIC_URL shows the snippets and install lines (tokens and keys) with a placeholder, and says how to fill it in', () => {
    const app = {
      appId: 1,
      appName: 'carol_shop',
      bot: '@carol_shop_bot',
      botId: null,
      domains: ['carol.example.com'],
      ownerKey: null,
      catalogListed: true,
      createdAt: new Date(),
      tokenPrefix: 'tma_exampl',
      tokenCreatedAt: new Date(),
      role: 'owner' as const,
    };
    const text = tokenIssued('tma_example', app, undefined, true);
    expect(text).toContain(`npm install https://YOUR-ANALYTICS-HOST/sdk/tma-analytics-sdk-${SDK_PACKAGE_VERSION}.tgz`);
    expect(text).toContain("endpoint: 'https://YOUR-ANALYTICS-HOST'");
    expect(text).toContain("Replace <code>https://YOUR-ANALYTICS-HOST</code> with this service's public address");
    // the keys' messages too: never the bot machine's own localhost, which is no address for the bot's users
    const readKey = readKeyIssued('tma_read_example', app, undefined);
    expect(readKey).toContain('https://YOUR-ANALYTICS-HOST/api/v1/apps/carol_shop/summary');
    const serverKey = serverKeyIssued('tma_server_example', app, undefined);
    expect(serverKey).toContain(
      `npm install https://YOUR-ANALYTICS-HOST/sdk/tma-analytics-grammy-${SDK_PACKAGE_VERSION}.tgz`,
    );
    expect(serverKey).toContain('curl -X POST https://YOUR-ANALYTICS-HOST/events');
    for (const message of [readKey, serverKey]) {
      expect(message).not.toContain('localhost');
      expect(message).toContain("Replace <code>https://YOUR-ANALYTICS-HOST</code> with this service's public address");
    }
  });

  it('refuses a taken app name and asks for another', async () => {
    await register(ALICE, '@alice_taken_bot', 'taken.example.com', 'alice_taken');
    await harness.click(BOB, 'menu:new');
    await harness.send(BOB, '@bob_shop_bot');
    await harness.send(BOB, '/skip');
    await harness.send(BOB, 'bob.example.com');
    // one message says the name is taken and asks for another
    const taken = (await harness.send(BOB, 'alice_taken')).filter((call) => call.method === 'sendMessage');
    const told = `The app name &quot;alice_taken&quot; is already taken. Choose another name.\n\n${TEXT.askAppName}`;
    expect(lastTexts(taken)).toBe(told);
    expect(taken.filter((call) => String(call.payload.text).includes('already taken'))).toHaveLength(1);
    tokenIn(textsOf(await harness.send(BOB, 'bob_shop')));
  });

  it('leaves at any step with /cancel and creates nothing', async () => {
    await harness.click(DAVE, 'menu:new');
    await harness.send(DAVE, '@dave_other_bot');
    expect(textsOf(await harness.send(DAVE, '/cancel'))).toContain('Cancelled. Nothing was changed.');
    expect(textsOf(await harness.send(DAVE, 'dave-other'))).toContain('Use /analytics');
    expect(
      (await service.services.registry.listApps({ surface: 'bot', telegramId: String(DAVE) })).map(
        (app) => app.appName,
      ),
    ).toEqual([]);
  });

  it('survives a restart of the bot in the middle of the dialog', async () => {
    await harness.click(ALICE, 'menu:new');
    await harness.send(ALICE, '@alice_second_bot');
    await harness.send(ALICE, '/skip');
    harness.restart();
    expect(textsOf(await harness.send(ALICE, 'second.example.com'))).toContain('Send the app name');
    tokenIn(textsOf(await harness.send(ALICE, 'alice_second')));
  });

  it('answers a button press during the dialog without leaving it', async () => {
    await harness.click(BOB, 'menu:new');
    const pressed = await harness.click(BOB, 'menu:apps');
    expect(alertsOf(pressed)).toEqual(['Finish the current step first, or send /cancel.']);
    await harness.send(BOB, '/cancel');
  });
});

describe('messages that show a secret', () => {
  /** the plain text Telegram shows of a message sent in HTML */
  const shown = (call: ApiCall) => String(call.payload.text).replace(/<[^>]+>/g, '');

  it('keeps a token, a read key and a server key readable: every button on them answers in a new message', async () => {
    await harness.click(ALICE, 'menu:new');
    await harness.send(ALICE, '@alice_secret_bot');
    await harness.send(ALICE, '/skip');
    await harness.send(ALICE, 'secret.example.com');
    const issued = (await harness.send(ALICE, 'alice_secret')).filter((call) => call.method === 'sendMessage').at(-1)!;
    const id = await appId('alice_secret');
    const readKey = (await harness.click(ALICE, `rknew:${id}`)).filter((call) => call.method === 'sendMessage').at(-1)!;
    const serverKey = (await harness.click(ALICE, `sknew:${id}`))
      .filter((call) => call.method === 'sendMessage')
      .at(-1)!;
    for (const message of [issued, readKey, serverKey]) {
      expect(shown(message)).toMatch(/tma_(read_|server_)?[A-Za-z0-9_-]{32,40}/);
      for (const button of buttonsOf([message]).filter(Boolean)) {
        const pressed = (await harness.click(ALICE, button, shown(message))).map((call) => call.method);
        expect(pressed, `${button} on a secret`).toContain('sendMessage');
        expect(pressed, `${button} on a secret`).not.toContain('editMessageText');
        expect(pressed, `${button} on a secret`).not.toContain('editMessageReplyMarkup');
        // a button that opened a dialog (New token) is left before the next one
        await harness.send(ALICE, '/cancel');
      }
    }
    // a message without a secret is still edited in place
    expect((await harness.click(ALICE, 'menu:apps')).map((call) => call.method)).toContain('editMessageText');
  });
});

describe('my tokens', () => {
  it('shows every app of the user with domains, token prefix, last event time and the last rejection', async () => {
    const token = await register(ALICE, '@alice_live_bot', 'live.example.com', 'alice_live');
    const before = textsOf(await harness.click(ALICE, 'menu:apps'));
    expect(before).toContain('<b>alice_live</b> · @alice_live_bot');
    expect(before).toContain('Domains: live.example.com');
    expect(before).toContain(`<code>${token.slice(0, 10)}…</code>`);
    expect(before).toMatch(/alice_live[\s\S]*Last event: no events yet/);
    expect(before).not.toContain(token);

    expect(
      (await postEvents(service.url, makeEvent('alice_live'), { token, origin: 'https://live.example.com' })).status,
    ).toBe(201);
    const after = textsOf(await harness.send(ALICE, '/mytokens'));
    expect(after).toMatch(/alice_live[\s\S]*Last event: just now \(\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\)/);

    expect(
      (await postEvents(service.url, makeEvent('alice_live'), { token, origin: 'https://other.site' })).status,
    ).toBe(403);
    const rejected = textsOf(await harness.send(ALICE, '/mytokens'));
    expect(rejected).toContain('⚠️ Last rejected request: 403 domain mismatch from https://other.site, just now');
    expect(textsOf(await harness.send(BOB, '/mytokens'))).not.toContain('alice_live');
  });

  it('lets the owner take an app out of the public catalog and list it again from its card', async () => {
    await register(ALICE, '@alice_cat_bot', 'cat.example.com', 'alice_cat');
    const id = await appId('alice_cat');
    const card = await harness.click(ALICE, `app:${id}`);
    expect(textsOf(card)).toContain('Public catalog: listed');
    expect(buttonsOf(card)).toContain(`cat:${id}`);
    const out = await harness.click(ALICE, `cat:${id}`);
    expect(alertsOf(out)).toEqual(['Taken out of the public catalog']);
    expect(textsOf(out)).toContain('Public catalog: not listed');
    expect((await service.store.prisma.app.findUniqueOrThrow({ where: { id } })).catalogListed).toBe(false);
    const back = await harness.click(ALICE, `cat:${id}`);
    expect(textsOf(back)).toContain('Public catalog: listed');
    expect((await service.store.prisma.app.findUniqueOrThrow({ where: { id } })).catalogListed).toBe(true);
  });

  it('revokes after confirmation; the token then answers "Token is invalid."', async () => {
    const token = await register(ALICE, '@alice_rev_bot', 'rev.example.com', 'alice_rev');
    const id = await appId('alice_rev');
    const card = await harness.click(ALICE, `app:${id}`);
    expect(buttonsOf(card)).toContain(`rev:${id}`);
    // the card's dashboard button opens this app's dashboard in the Mini App, not the list of apps
    const keyboard = card.find((call) => call.method === 'editMessageText')!.payload.reply_markup as {
      inline_keyboard: { web_app?: { url: string } }[][];
    };
    expect(keyboard.inline_keyboard.flat().find((button) => button.web_app)?.web_app?.url).toBe(
      'https://analytics.example.net/webapp?app=alice_rev',
    );
    expect(buttonsOf(await harness.click(ALICE, `rev:${id}`))).toEqual([`rev!:${id}`, `app:${id}`]);
    expect(
      (await postEvents(service.url, makeEvent('alice_rev'), { token, origin: 'https://rev.example.com' })).status,
    ).toBe(201);
    const revoked = await harness.click(ALICE, `rev!:${id}`);
    expect(alertsOf(revoked)).toEqual(['Token revoked']);
    expect(textsOf(revoked)).toContain('Token: revoked');
    expect(
      (await postEvents(service.url, makeEvent('alice_rev'), { token, origin: 'https://rev.example.com' })).text,
    ).toBe('{"message":"Token is invalid."}');
  });

  it('regenerates: the old token stops, the new one works', async () => {
    const old = await register(ALICE, '@alice_regen_bot', 'regen.example.com', 'alice_regen');
    const id = await appId('alice_regen');
    await harness.click(ALICE, `regen:${id}`);
    const fresh = tokenIn(textsOf(await harness.click(ALICE, `regen!:${id}`)));
    expect(fresh).not.toBe(old);
    expect(
      (await postEvents(service.url, makeEvent('alice_regen'), { token: old, origin: 'https://regen.example.com' }))
        .text,
    ).toBe('{"message":"Token is invalid."}');
    expect(
      (await postEvents(service.url, makeEvent('alice_regen'), { token: fresh, origin: 'https://regen.example.com' }))
        .status,
    ).toBe(201);
  });

  it('adds and removes domains', async () => {
    const token = await register(ALICE, '@alice_dom_bot', 'one.example.com', 'alice_dom');
    const id = await appId('alice_dom');
    expect(buttonsOf(await harness.click(ALICE, `dom:${id}`))).toEqual([`domadd:${id}`, `app:${id}`]);
    expect(textsOf(await harness.click(ALICE, `domadd:${id}`))).toContain('Send the domain to add');
    expect(textsOf(await harness.send(ALICE, 'not a domain'))).toContain('host name');
    // back to the app's card, which lists the domains, with the app's buttons
    const added = await harness.send(ALICE, 'https://two.example.com');
    expect(textsOf(added)).toContain('✅ two.example.com added.\n\n<b>alice_dom</b>');
    expect(textsOf(added)).toContain('Domains: one.example.com, two.example.com');
    expect(buttonsOf(added)).toEqual(expect.arrayContaining([`dom:${id}`, `alerts:app:${id}`, 'menu:apps']));
    expect(buttonsOf(added)).not.toContain('menu:new');
    expect(
      (await postEvents(service.url, makeEvent('alice_dom'), { token, origin: 'https://two.example.com' })).status,
    ).toBe(201);
    const removed = await harness.click(ALICE, `domdel:${id}:0`);
    expect(alertsOf(removed)).toEqual(['one.example.com removed']);
    expect(
      (await postEvents(service.url, makeEvent('alice_dom'), { token, origin: 'https://one.example.com' })).status,
    ).toBe(403);
  });

  it('deletes an app after confirmation', async () => {
    const token = await register(ALICE, '@alice_del_bot', 'del.example.com', 'alice_del');
    const id = await appId('alice_del');
    await harness.click(ALICE, `del:${id}`);
    expect(textsOf(await harness.click(ALICE, `del!:${id}`))).toContain('was deleted');
    expect(
      (await postEvents(service.url, makeEvent('alice_del'), { token, origin: 'https://del.example.com' })).text,
    ).toBe('{"message":"Token is invalid."}');
  });
});

describe('read API keys', () => {
  it('creates a key through the buttons, lists it, revokes it after confirmation; the key then stops working', async () => {
    await register(ALICE, '@alice_read_bot', 'read.example.com', 'alice_read');
    const id = await appId('alice_read');
    expect(buttonsOf(await harness.click(ALICE, `app:${id}`))).toContain(`rk:${id}`);
    const empty = await harness.click(ALICE, `rk:${id}`);
    expect(textsOf(empty)).toContain('🔑 Read API keys of <b>alice_read</b>');
    expect(textsOf(empty)).toContain('No active read keys.');
    expect(buttonsOf(empty)).toEqual([`rknew:${id}`, `app:${id}`]);

    const created = await harness.click(ALICE, `rknew:${id}`);
    expect(alertsOf(created)).toEqual(['Read key created']);
    const issued = created.find((call) => call.method === 'sendMessage')!;
    const key = /<code>(tma_read_[A-Za-z0-9_-]{32})<\/code>/.exec(String(issued.payload.text))?.[1];
    expect(key, String(issued.payload.text)).toBeDefined();
    expect(String(issued.payload.text)).toContain(
      `curl -H &quot;Authorization: Bearer ${key}&quot; https://analytics.example.net/api/v1/apps/alice_read/summary`,
    );
    expect(await service.services.readKeys.authenticate(key!)).toEqual({ appId: id, appName: 'alice_read' });

    const prefix = key!.slice(0, 17);
    const shown = prefix.slice('tma_read_'.length);
    const listed = await harness.click(ALICE, `rk:${id}`);
    expect(textsOf(listed)).toMatch(
      new RegExp(`<code>${prefix.replace(/[-_]/g, '\\$&')}…</code> created \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC`),
    );
    expect(textsOf(listed)).not.toContain(key);
    expect(buttonsOf(listed)).toEqual([`rkrev:${id}:${shown}`, `rknew:${id}`, `app:${id}`]);

    const question = await harness.click(ALICE, `rkrev:${id}:${shown}`);
    expect(textsOf(question)).toContain(`Revoke the read key <code>${prefix}…</code> of <b>alice_read</b>?`);
    expect(buttonsOf(question)).toEqual([`rkrev!:${id}:${shown}`, `rk:${id}`]);
    expect(await service.services.readKeys.authenticate(key!)).not.toBeNull(); // asking revokes nothing

    const revoked = await harness.click(ALICE, `rkrev!:${id}:${shown}`);
    expect(alertsOf(revoked)).toEqual([`Read key ${prefix}… revoked`]);
    expect(textsOf(revoked)).toContain('No active read keys.');
    expect(await service.services.readKeys.authenticate(key!)).toBeNull();
    // a second press says it was already revoked
    expect(alertsOf(await harness.click(ALICE, `rkrev!:${id}:${shown}`))[0]).toContain('already revoked');
  });

  it("gives another user neither the app's keys nor a way to make or revoke one", async () => {
    await register(ALICE, '@alice_keys_bot', 'keys.example.com', 'alice_keys');
    const id = await appId('alice_keys');
    const { key, readKey } = await service.services.readKeys.create('alice_keys', {
      surface: 'bot',
      telegramId: String(ALICE),
    });
    const shown = readKey.prefix.slice('tma_read_'.length);
    for (const data of [`rk:${id}`, `rknew:${id}`, `rkrev:${id}:${shown}`, `rkrev!:${id}:${shown}`]) {
      const calls = await harness.click(BOB, data);
      expect(alertsOf(calls), data).toEqual(['This app does not exist or is not yours.']);
      expect(textsOf(calls)).toBe('');
    }
    expect(await service.services.readKeys.authenticate(key)).not.toBeNull();
    expect(await service.services.readKeys.list('alice_keys', { surface: 'cli', isAdmin: true })).toHaveLength(1);
  });
});

describe('authorisation', () => {
  it('gives another user nothing through forged callback data', async () => {
    const token = await register(ALICE, '@alice_safe_bot', 'safe.example.com', 'alice_safe');
    const id = await appId('alice_safe');
    for (const data of [`app:${id}`, `rev!:${id}`, `regen!:${id}`, `dom:${id}`, `domdel:${id}:0`, `del!:${id}`]) {
      const calls = await harness.click(BOB, data);
      expect(alertsOf(calls), data).toEqual(['This app does not exist or is not yours.']);
      expect(textsOf(calls)).toBe('');
    }
    expect(
      (await postEvents(service.url, makeEvent('alice_safe'), { token, origin: 'https://safe.example.com' })).status,
    ).toBe(201);
  });

  it('keeps administrator commands from other users', async () => {
    for (const command of ['/admin', '/find alice_safe', '/revoke alice_safe']) {
      expect(textsOf(await harness.send(BOB, command))).toBe('This command is only for administrators.');
    }
    expect(alertsOf(await harness.click(BOB, 'admin:apps'))).toEqual(['']);
  });

  it('lets administrators list, find by name or owner, and revoke any app, audited', async () => {
    const token = await register(BOB, '@bob_watch_bot', 'watch.example.com', 'bob_watch');
    expect(textsOf(await harness.send(ADMIN, '/admin'))).toContain('<b>bob_watch</b>');
    expect(textsOf(await harness.send(ADMIN, `/find ${BOB}`))).toContain('<b>bob_watch</b>');
    expect(textsOf(await harness.send(ADMIN, `/find ${BOB}`))).not.toContain('<b>alice_safe</b>');
    expect(textsOf(await harness.send(ADMIN, '/find bob_watch'))).toContain('<b>bob_watch</b>');
    expect(textsOf(await harness.send(ADMIN, '/revoke bob_watch'))).toBe('🚫 The token of bob_watch is revoked.');
    expect(
      (await postEvents(service.url, makeEvent('bob_watch'), { token, origin: 'https://watch.example.com' })).text,
    ).toBe('{"message":"Token is invalid."}');
    const audit = await service.store.prisma.auditLog.findFirstOrThrow({
      where: { appName: 'bob_watch', action: 'token.revoke' },
    });
    expect(audit).toMatchObject({ surface: 'bot', detail: { admin: true } });
  });
});

describe('robustness', () => {
  it('ignores group chats and odd updates without failing', async () => {
    const calls = await harness.handle({
      update_id: 900001,
      message: {
        message_id: 1,
        date: 0,
        chat: { id: -100, type: 'supergroup', title: 'g' },
        from: { id: ALICE, is_bot: false, first_name: 'A' },
        text: '/mytokens',
      },
    });
    expect(calls).toEqual([]);
    await harness.handle({
      update_id: 900002,
      edited_message: {
        message_id: 1,
        date: 0,
        edit_date: 1,
        chat: { id: ALICE, type: 'private', first_name: 'A' },
        from: { id: ALICE, is_bot: false, first_name: 'A' },
        text: 'x',
      },
    });
    await harness.handle({ update_id: 900003, my_chat_member: undefined as never });
    expect(harness.errors).toEqual([]);
  });
});

describe('refusals inside dialogs', () => {
  const chat = { id: CAROL, type: 'private' as const, first_name: 'C' };
  const from = { id: CAROL, is_bot: false, first_name: 'C' };

  it('answers a non-text message during a question and keeps asking; /cancel addressed to the bot leaves', async () => {
    await harness.click(CAROL, 'menu:new');
    const sticker = await harness.handle({
      update_id: 900101,
      message: {
        message_id: 1,
        date: 0,
        chat,
        from,
        sticker: {
          file_id: 'f',
          file_unique_id: 'u',
          type: 'regular',
          width: 1,
          height: 1,
          is_animated: false,
          is_video: false,
        },
      },
    });
    expect(lastTexts(sticker)).toBe('Please answer with a text message, or /cancel.');
    expect(lastTexts(await harness.send(CAROL, '@carol_shop_bot'))).toContain("Send your bot's id");
    expect(lastTexts(await harness.send(CAROL, '/skip'))).toContain('Send the domain');
    expect(lastTexts(await harness.send(CAROL, '/cancel@tma_analytics_test_bot'))).toBe(
      'Cancelled. Nothing was changed.',
    );
    expect(lastTexts(await harness.send(CAROL, 'carol.example.com'))).toBe('Use /analytics to manage your tokens.');
    expect(await service.services.registry.listApps({ surface: 'bot', telegramId: String(CAROL) })).toEqual([]);
  });

  it('domains: the only domain stays, a domain already there is asked again, an app deleted meanwhile ends the dialog', async () => {
    await register(CAROL, '@carol_dom_bot', 'carol.example.com', 'carol_dom');
    const id = await appId('carol_dom');
    expect(alertsOf(await harness.click(CAROL, `domdel:${id}:0`))).toEqual([
      'carol.example.com is the only domain of carol_dom: add the new one before removing it.',
    ]);
    await harness.click(CAROL, `domadd:${id}`);
    expect(lastTexts(await harness.send(CAROL, 'carol.example.com'), 2)).toBe(
      'carol.example.com is already a domain of carol_dom.\n---\nSend the domain to add, for example <code>new.example.com</code>.\n/cancel to stop.',
    );
    expect(alertsOf(await harness.click(ADMIN, `del!:${id}`))).toEqual(['App deleted']);
    expect(lastTexts(await harness.send(CAROL, 'new.carol.example.com'))).toBe('There is no app named "carol_dom".');
    expect(lastTexts(await harness.send(CAROL, 'other.carol.example.com'))).toBe(
      'Use /analytics to manage your tokens.',
    );
  });
});

describe('refusals outside dialogs', () => {
  it('tells a non-administrator who presses "All apps" that it is for administrators', async () => {
    const pressed = await harness.click(BOB, 'admin:apps');
    expect(alertsOf(pressed)).toEqual(['']);
    expect(textsOf(pressed)).toBe('This command is only for administrators.');
  });

  it('tells an administrator revoking an unknown app that there is none', async () => {
    expect(textsOf(await harness.send(ADMIN, '/revoke no_such_app'))).toBe('There is no app named "no_such_app".');
  });

  it('serves no bot accounts, even in a private chat', async () => {
    const calls = await harness.handle({
      update_id: 900102,
      message: {
        message_id: 1,
        date: 0,
        chat: { id: CAROL, type: 'private', first_name: 'C' },
        from: { id: CAROL, is_bot: true, first_name: 'C' },
        text: '/start',
        entities: [{ type: 'bot_command', offset: 0, length: 6 }],
      },
    });
    expect(calls).toEqual([]);
  });
});

describe('screens and messages', () => {
  /** every inline keyboard of a step, as rows */
  const keyboardsOf = (calls: ApiCall[]) =>
    calls.flatMap((call) => {
      const markup = call.payload.reply_markup as { inline_keyboard?: unknown[][] } | undefined;
      return markup?.inline_keyboard ? [markup.inline_keyboard] : [];
    });

  it('sends no keyboard with an empty row on any of the main screens, for an owner, a member and an administrator', async () => {
    await register(ALICE, '@alice_rows_bot', 'rows.example.com', 'alice_rows');
    const id = await appId('alice_rows');
    const alice = { surface: 'bot' as const, telegramId: String(ALICE) };
    const { code } = await service.services.members.createInvite('alice_rows', 'viewer', alice);
    await harness.send(CAROL, `/start join_${code}`);
    await service.services.shareLinks.create('alice_rows', alice);
    await service.services.readKeys.create('alice_rows', alice);
    await service.services.serverKeys.create('alice_rows', alice);
    const screens: [number, string][] = [
      [ALICE, '/start'],
      [ALICE, 'menu:analytics'],
      [ADMIN, 'menu:analytics'],
      [ALICE, 'menu:apps'],
      [ADMIN, 'admin:apps'],
      [ALICE, `app:${id}`],
      [CAROL, `app:${id}`],
      [ALICE, `dom:${id}`],
      [ALICE, `rk:${id}`],
      [ALICE, `sk:${id}`],
      [ALICE, `data:${id}`],
      [ALICE, `share:${id}`],
      [ALICE, `team:${id}`],
      [ALICE, `rev:${id}`],
      [ALICE, `del:${id}`],
      [ALICE, `alerts:app:${id}`],
      [ALICE, '/alerts'],
      [ALICE, '/help'],
      [ALICE, '/cancel'],
    ];
    const empty: string[] = [];
    for (const [user, step] of screens) {
      const calls = step.startsWith('/') ? await harness.send(user, step) : await harness.click(user, step);
      expect(keyboardsOf(calls).length, step).toBeGreaterThan(0);
      for (const rows of keyboardsOf(calls))
        if (rows.some((row) => row.length === 0)) empty.push(`${step} as ${user}: ${JSON.stringify(rows)}`);
    }
    expect(empty).toEqual([]);
  });

  it("leads from an app's alert settings back to that app's card", async () => {
    await register(ALICE, '@alice_back_bot', 'back.example.com', 'alice_back');
    const id = await appId('alice_back');
    const settings = await harness.click(ALICE, `alerts:app:${id}`);
    expect(buttonsOf(settings).at(-1)).toBe(`app:${id}`);
    expect(buttonsOf(settings)).not.toContain('alerts:list');
    const [subscription] = buttonsOf(settings);
    expect(buttonsOf(await harness.click(ALICE, subscription!)).at(-1)).toBe(`app:${id}`);
    expect(textsOf(await harness.click(ALICE, `app:${id}`))).toContain('<b>alice_back</b>');
  });

  it('/help lists every command with one line each, from the list Telegram is given', async () => {
    const help = textsOf(await harness.send(DAVE, '/help'));
    for (const { command, description } of COMMANDS) expect(help).toContain(`/${command} — ${description}`);
    expect(COMMANDS.map(({ command }) => command)).toContain('help');
    expect(help).not.toContain('/admin');
    const adminHelp = textsOf(await harness.send(ADMIN, '/help'));
    expect(adminHelp).toContain('/admin — All apps (administrators)');
    expect(adminHelp).toContain('/find — ');
    expect(adminHelp).toContain('/revoke — ');
    // every command listed is one the bot answers (not the fallback pointing to /analytics)
    for (const { command } of COMMANDS)
      expect(textsOf(await harness.send(DAVE, `/${command}`)), command).not.toBe(
        'Use /analytics to manage your tokens.',
      );
    await harness.send(DAVE, '/cancel');
  });

  it('groups the counts of an app card by thousands', () => {
    const app = {
      appId: 1,
      appName: 'big_app',
      bot: '@big_app_bot',
      botId: '7012345678',
      domains: ['big.example.com'],
      ownerKey: null,
      catalogListed: true,
      createdAt: new Date(),
      tokenPrefix: 'tma_exampl',
      tokenCreatedAt: new Date(),
      role: 'owner' as const,
    };
    const outcomes = { verified: 12345, no_proof: 2500 } as Record<string, number>;
    const card = appCard(
      {
        app,
        summary: { lastEventAt: null, eventsTotal: 73875, lastRejection: null },
        launches: { launches: 14845, outcomes: outcomes as never, verifiedUsers: 1001, verifiedSessions: 0 },
      },
      new Date(),
    );
    expect(card).toContain('Events recorded: 73,875');
    expect(card).toContain('Launches (7 days): 14,845, verified by Telegram 12,345 (1,001 users)');
    expect(card).toMatch(/\n {2}2,500 /);
  });

  it('names who made a key or link: "you" for the reader, the owner by name for a member', async () => {
    await harness.click(ALICE, 'menu:new');
    await harness.send(ALICE, '@alice_made_bot');
    await harness.send(ALICE, '/skip');
    await harness.send(ALICE, 'made.example.com');
    tokenIn(textsOf(await harness.send(ALICE, 'alice_made')));
    const id = await appId('alice_made');
    await harness.click(ALICE, `rknew:${id}`);
    await harness.click(ALICE, `sknew:${id}`);
    await harness.click(ALICE, `share!:${id}`);
    const alice = { surface: 'bot' as const, telegramId: String(ALICE) };
    const { code } = await service.services.members.createInvite('alice_made', 'editor', alice);
    await harness.send(BOB, `/start join_${code}`);
    for (const screen of [`rk:${id}`, `sk:${id}`, `share:${id}`]) {
      expect(textsOf(await harness.click(ALICE, screen)), screen).toMatch(/ by you(\n|$)/);
      // the owner registered the app in the bot, so the bot knows their name
      expect(textsOf(await harness.click(BOB, screen)), screen).toMatch(
        new RegExp(` by User${ALICE} \\(owner, [A-Za-z0-9_-]{12}\\)(\n|$)`),
      );
    }
  });
});

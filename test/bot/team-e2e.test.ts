// A team invite end to end against the Bot API emulator (telegram-test-api): the management bot polls it, a
// teammate opens the owner's deep link (/start join_<code>) from their own chat and joins as a viewer, then sees the
// app with their role; the same link from a third chat is refused as used.
import type { Bot } from 'grammy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBot } from '../../src/bot/bot.ts';
import type { BotContext } from '../../src/bot/context.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startTelegramEmulator, type TelegramServer } from '../helpers/telegram-emulator.ts';

const BOT_TOKEN = '700000007:team-e2e-token';
const OWNER = 610001;
const MATE = 620002;
const LATE = 630003;
const APP = 'team_e2e_app';

let telegram: TelegramServer;
let service: TestService;
let bot: Bot<BotContext>;

beforeAll(async () => {
  telegram = await startTelegramEmulator();
  service = await startTestService();
  bot = createBot(service.services, {
    token: BOT_TOKEN,
    apiRoot: telegram.config.apiURL,
    log: { warn: () => {}, error: () => {} },
  });
  await bot.init();
  void bot.start({ drop_pending_updates: false });
});
afterAll(async () => {
  await bot?.stop();
  await service?.close();
  await telegram?.stop();
});

/** the bot's messages in one user's chat, newest last */
const chatOf = (user: number) =>
  telegram.storage.botMessages
    .filter((update) => update.botToken === BOT_TOKEN && String(update.message.chat_id) === String(user))
    .map((update) => String(update.message.text));

/** sends a command from the user's own chat and waits for the bot's next message there */
async function say(user: number, command: string): Promise<string> {
  const client = telegram.getClient(BOT_TOKEN, { userId: user, chatId: user, type: 'private', firstName: `U${user}` });
  const before = chatOf(user).length;
  await client.sendCommand(client.makeCommand(command));
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const messages = chatOf(user);
    if (messages.length > before) return messages.at(-1)!;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the bot did not answer ${command}`);
}

describe('team invite through the Bot API emulator', () => {
  it('a deep link joins the teammate once, with the role it was made for', async () => {
    const owner = { surface: 'bot' as const, telegramId: String(OWNER) };
    await service.services.registry.createApp(
      { appName: APP, bot: '@team_e2e_bot', domains: ['team-e2e.example.com'], ownerTelegramId: String(OWNER) },
      owner,
    );
    const invite = await service.services.members.createInvite(APP, 'viewer', owner);

    expect(await say(MATE, `/start join_${invite.code}`)).toContain(`You joined <b>${APP}</b> as viewer.`);
    const mine = await say(MATE, '/mytokens');
    expect(mine).toContain(APP);
    expect(mine).toContain('Your role: viewer');
    expect(await say(LATE, `/start join_${invite.code}`)).toContain('This invite link was already used');
    expect(await say(LATE, '/mytokens')).not.toContain(APP);
  });
});

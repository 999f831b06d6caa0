// End to end: the service started as `npm start` does, with its bot polling a local Bot API emulator
// (telegram-test-api). A user walks /start → Analytics → New token → bad and good answers → token; the
// token works on POST /events, "My tokens" then shows the last event time, and revoke stops the token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTelegramEmulator, type TelegramServer } from '../helpers/telegram-emulator.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { killAllChildren, startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { embeddedDataDir } from '../helpers/stores.ts';

const BOT_TOKEN = '700000002:e2e-test-token';
const USER = 424242;

interface BotMessage {
  messageId: number;
  text: string;
  buttons: string[];
}

let telegram: TelegramServer;
let service: ServiceProcess;
let client: ReturnType<TelegramServer['getClient']>;

beforeAll(async () => {
  telegram = await startTelegramEmulator();
  client = telegram.getClient(BOT_TOKEN, {
    userId: USER,
    chatId: USER,
    type: 'private',
    firstName: 'Erin',
    userName: 'erin',
  });
  service = await startServiceProcess({
    DATA_DIR: await embeddedDataDir(),
    BOT_TOKEN,
    TELEGRAM_API_ROOT: telegram.config.apiURL,
  });
});
afterAll(async () => {
  await killAllChildren();
  await telegram?.stop();
});

/** what the user's chat shows now: every bot message with its current (possibly edited) text and buttons */
function chat(): BotMessage[] {
  return telegram.storage.botMessages
    .filter((update) => update.botToken === BOT_TOKEN && String(update.message.chat_id) === String(USER))
    .map((update) => {
      const markup = update.message.reply_markup as { inline_keyboard?: { callback_data?: string }[][] } | undefined;
      return {
        messageId: update.messageId,
        text: String(update.message.text),
        buttons: (markup?.inline_keyboard ?? []).flat().map((button) => button.callback_data ?? ''),
      };
    });
}

/** waits until the chat changes (a new message or an edit) and returns the message that changed */
async function after(action: () => Promise<unknown>): Promise<BotMessage> {
  const before = JSON.stringify(chat());
  await action();
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const now = chat();
    if (JSON.stringify(now) !== before) {
      const old = JSON.parse(before) as BotMessage[];
      return now.find((message, index) => JSON.stringify(message) !== JSON.stringify(old[index]))!;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`the bot did not answer; service output:\n${service.output()}`);
}

const say = (text: string) =>
  after(() =>
    text.startsWith('/') ? client.sendCommand(client.makeCommand(text)) : client.sendMessage(client.makeMessage(text)),
  );
/** a button pressed on a message; Telegram sends the message's text with the press (the emulator leaves it out) */
const press = (data: string, on: BotMessage) =>
  after(() =>
    client.sendCallback(client.makeCallbackQuery(data, { message: { message_id: on.messageId, text: on.text } })),
  );

describe('bot against a Bot API emulator', () => {
  it('issues a working token, shows its last event, and revokes it', async () => {
    const start = await say('/start');
    expect(start.text).toContain('Open <b>Analytics</b>');
    const analytics = await press('menu:analytics', start);
    expect(analytics.buttons).toEqual(['menu:new', 'menu:apps']);

    expect((await press('menu:new', analytics)).text).toContain("address of your mini app's bot");
    expect((await say('https://example.com/not-telegram')).text).toContain('ending in "bot"');
    expect((await say('https://t.me/erin_shop_bot')).text).toContain("Send your bot's id");
    expect((await say('7012345678')).text).toContain('Send the domain');
    expect((await say('10.0.0.1')).text).toContain('not an IP address');
    expect((await say('erin.example.com')).text).toContain('Send the app name');
    expect((await say('Erin Shop!')).text).toContain('3–64 characters');
    const issued = await say('erin_shop');
    const token = /<code>(tma_[0-9A-Za-z]{40})<\/code>/.exec(issued.text)?.[1];
    expect(token, issued.text).toBeDefined();

    expect(
      (await postEvents(service.url, makeEvent('erin_shop'), { token, origin: 'https://erin.example.com' })).status,
    ).toBe(201);
    const apps = await press('menu:apps', issued);
    // the token's message keeps the token: "My tokens" came as a new message
    expect(apps.messageId).not.toBe(issued.messageId);
    expect(chat().find((message) => message.messageId === issued.messageId)!.text).toContain(token);
    expect(apps.text).toMatch(/<b>erin_shop<\/b>[\s\S]*Last event: just now \(\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\)/);

    const appButton = apps.buttons.find((data) => data.startsWith('app:'))!;
    const card = await press(appButton, apps);
    const confirm = await press(card.buttons.find((data) => data.startsWith('rev:'))!, card);
    expect(confirm.text).toContain('Revoke the token of <b>erin_shop</b>?');
    const revoked = await press(confirm.buttons.find((data) => data.startsWith('rev!:'))!, confirm);
    expect(revoked.text).toContain('Token: revoked');
    expect(
      (await postEvents(service.url, makeEvent('erin_shop'), { token, origin: 'https://erin.example.com' })).text,
    ).toBe('{"message":"Token is invalid."}');
  });
});

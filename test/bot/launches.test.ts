// The management bot on launches Telegram signed: an app without its bot's id says why nothing verifies and how to
// fix it, the "🆔 Bot id" dialog sets it, and the app's card names its launches of the week: verified, and why the
// others were not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BotHarness, buttonsOf, textsOf } from '../helpers/bot-harness.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { launchSigner } from '../helpers/telegram-launch.ts';

const OWNER = 5005;
const BOT_ID = 7_123_456_789;
const signer = launchSigner();

let service: TestService;
let harness: BotHarness;

beforeAll(async () => {
  service = await startTestService({ TELEGRAM_PUBLIC_KEY: signer.publicKeyHex });
  harness = new BotHarness(service.services);
});
afterAll(() => service?.close());

describe("the bot and its apps' launches", () => {
  it('says an app without a bot id verifies nothing, sets the id in a dialog, then names the week of launches', async () => {
    await harness.click(OWNER, 'menu:new');
    await harness.send(OWNER, '@launch_shop_bot');
    await harness.send(OWNER, '/skip');
    await harness.send(OWNER, 'app.example.com');
    const issued = textsOf(await harness.send(OWNER, 'launch_shop'));
    const token = /<code>(tma_[0-9A-Za-z]{40})<\/code>/.exec(issued)![1]!;
    const app = await service.services.registry.getApp('launch_shop', { surface: 'bot', telegramId: String(OWNER) });

    const card = textsOf(await harness.click(OWNER, `app:${app.appId}`));
    expect(card).toContain('⚠️ No bot id: no launch can be verified');
    expect(buttonsOf(await harness.click(OWNER, `app:${app.appId}`))).toContain(`botid:${app.appId}`);

    expect(textsOf(await harness.click(OWNER, `botid:${app.appId}`))).toContain("Send your bot's id");
    expect(textsOf(await harness.send(OWNER, String(BOT_ID)))).toContain(
      `The bot id of <b>launch_shop</b> is <code>${BOT_ID}</code>`,
    );

    const signed = (user: number, botId = BOT_ID) => signer.sign({ botId, user: { id: user, first_name: 'U' } });
    const launches = [
      makeEvent('launch_shop', { user_id: 1, init_data: signed(1) }),
      makeEvent('launch_shop', { user_id: 2 }),
      makeEvent('launch_shop', { user_id: 3 }),
      makeEvent('launch_shop', { user_id: 4, init_data: signed(5) }),
    ];
    expect((await postEvents(service.url, launches, { token })).status).toBe(201);
    await service.loaded();
    const after = textsOf(await harness.click(OWNER, `app:${app.appId}`));
    expect(after).toContain(`<b>launch_shop</b> · @launch_shop_bot (id ${BOT_ID})`);
    expect(after).not.toContain('No bot id');
    expect(after).toContain('Launches (7 days): 4, verified by Telegram 1 (1 user)');
    expect(after).toContain('Not verified:\n  2 sent no launch data');
    expect(after).toContain("1 carried another user's launch data");
  });
});

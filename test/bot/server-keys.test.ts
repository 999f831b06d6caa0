// Server keys through the management bot's buttons, as read keys are: create (shown once, with the middleware's install
// line and two lines), list, revoke after confirmation, the key then refused by POST /events; another user gets nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRAMMY_PACKAGE_NAME, SDK_PACKAGE_VERSION } from '../../src/sdk-serving/sdk-files.ts';
import { alertsOf, BotHarness, buttonsOf, textsOf } from '../helpers/bot-harness.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const ALICE = 1001;
const BOB = 2002;

let service: TestService;
let harness: BotHarness;

beforeAll(async () => {
  service = await startTestService({ PUBLIC_URL: 'https://analytics.example.net/' });
  harness = new BotHarness(service.services);
});
afterAll(() => service?.close());

const sendWith = (key: string) =>
  postEvents(service.url, makeEvent('alice_srv', { event_name: 'bot-start', start_param: 'ad1' }), {
    origin: null,
    headers: { authorization: `Bearer ${key}` },
  });

describe('server keys in the bot', () => {
  it('creates a key through the buttons, lists it, revokes it after confirmation; the key then stops working', async () => {
    const { app } = await service.services.registry.createApp(
      { appName: 'alice_srv', bot: '@alice_srv_bot', domains: ['srv.example.com'], ownerTelegramId: String(ALICE) },
      { surface: 'bot', telegramId: String(ALICE) },
    );
    const id = app.appId;
    expect(buttonsOf(await harness.click(ALICE, `app:${id}`))).toContain(`sk:${id}`);
    const empty = await harness.click(ALICE, `sk:${id}`);
    expect(textsOf(empty)).toContain('🤖 Server keys of <b>alice_srv</b>');
    expect(textsOf(empty)).toContain('No active server keys.');
    expect(buttonsOf(empty)).toEqual([`sknew:${id}`, `app:${id}`]);

    const created = await harness.click(ALICE, `sknew:${id}`);
    expect(alertsOf(created)).toEqual(['Server key created']);
    const issued = String(created.find((call) => call.method === 'sendMessage')!.payload.text);
    const key = /<code>(tma_server_[A-Za-z0-9_-]{32})<\/code>/.exec(issued)?.[1];
    expect(key, issued).toBeDefined();
    expect(issued).toContain(
      `<pre>npm install https://analytics.example.net/sdk/${GRAMMY_PACKAGE_NAME}-${SDK_PACKAGE_VERSION}.tgz</pre>`,
    );
    expect(issued).toContain(
      `bot.use(analytics({ serverKey: '${key}', appName: 'alice_srv', endpoint: 'https://analytics.example.net' }));`,
    );
    // PUBLIC_URL is set: no placeholder to replace
    expect(issued).not.toContain('YOUR-ANALYTICS-HOST');
    expect((await sendWith(key!)).status).toBe(201);

    const prefix = key!.slice(0, 19);
    const shown = prefix.slice('tma_server_'.length);
    const listed = await harness.click(ALICE, `sk:${id}`);
    expect(textsOf(listed)).toContain(`<code>${prefix}…</code> created`);
    expect(textsOf(listed)).not.toContain(key);
    expect(buttonsOf(listed)).toEqual([`skrev:${id}:${shown}`, `sknew:${id}`, `app:${id}`]);

    const question = await harness.click(ALICE, `skrev:${id}:${shown}`);
    expect(textsOf(question)).toContain(`Revoke the server key <code>${prefix}…</code> of <b>alice_srv</b>?`);
    expect(buttonsOf(question)).toEqual([`skrev!:${id}:${shown}`, `sk:${id}`]);

    // another user: nothing, not even with forged data
    for (const data of [`sk:${id}`, `sknew:${id}`, `skrev:${id}:${shown}`, `skrev!:${id}:${shown}`]) {
      const calls = await harness.click(BOB, data);
      expect(alertsOf(calls), data).toEqual(['This app does not exist or is not yours.']);
      expect(textsOf(calls)).toBe('');
    }
    expect((await sendWith(key!)).status).toBe(201);

    const revoked = await harness.click(ALICE, `skrev!:${id}:${shown}`);
    expect(alertsOf(revoked)).toEqual([`Server key ${prefix}… revoked`]);
    expect(textsOf(revoked)).toContain('No active server keys.');
    const refused = await sendWith(key!);
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({ message: 'Token is invalid.' });
    expect(alertsOf(await harness.click(ALICE, `skrev!:${id}:${shown}`))[0]).toContain('already revoked');
  });
});

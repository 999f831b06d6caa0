// The public dashboard link through the management bot's buttons: make it (shown once), replace it, revoke it; the
// link then opens nothing; another user gets nothing, not even with forged data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertsOf, BotHarness, buttonsOf, textsOf } from '../helpers/bot-harness.ts';
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

const opens = async (secret: string) => (await fetch(`${service.url}/api/share/${secret}/dashboard`)).status;

describe('public link in the bot', () => {
  it('makes a link shown once, replaces and revokes it; only the owner may', async () => {
    const { app } = await service.services.registry.createApp(
      {
        appName: 'alice_share',
        bot: '@alice_share_bot',
        domains: ['share.example.com'],
        ownerTelegramId: String(ALICE),
      },
      { surface: 'bot', telegramId: String(ALICE) },
    );
    const id = app.appId;
    expect(buttonsOf(await harness.click(ALICE, `app:${id}`))).toContain(`share:${id}`);
    const empty = await harness.click(ALICE, `share:${id}`);
    expect(textsOf(empty)).toContain('No link yet.');
    expect(buttonsOf(empty)).toEqual([`share!:${id}`, `app:${id}`]);

    const made = await harness.click(ALICE, `share!:${id}`);
    const message = String(made.find((call) => call.method === 'sendMessage')!.payload.text);
    const secret = /https:\/\/analytics\.example\.net\/share\/(tma_share_[A-Za-z0-9_-]{32})/.exec(message)?.[1];
    expect(secret, message).toBeDefined();
    expect(await opens(secret!)).toBe(200);
    const active = await harness.click(ALICE, `share:${id}`);
    expect(textsOf(active)).toContain(`A link is active: <code>${secret!.slice(0, 16)}…</code>`);
    expect(textsOf(active)).not.toContain(secret);
    expect(buttonsOf(active)).toEqual([`share!:${id}`, `unshare!:${id}`, `app:${id}`]);

    for (const data of [`share:${id}`, `share!:${id}`, `unshare!:${id}`]) {
      const calls = await harness.click(BOB, data);
      expect(alertsOf(calls), data).toEqual(['This app does not exist or is not yours.']);
    }
    expect(await opens(secret!)).toBe(200);

    expect(alertsOf(await harness.click(ALICE, `unshare!:${id}`))).toEqual(['Link revoked']);
    expect(await opens(secret!)).toBe(404);
    expect(alertsOf(await harness.click(ALICE, `unshare!:${id}`))).toEqual(['There was no link']);
  });
});

// Alerts from the management bot, sent to the Bot API emulator (telegram-test-api) with a clock the test moves: the
// first event, silence and its end, a refusal spike whose button adds the refused domain, a quota reached, the weekly
// digest; each told once until it clears; /alerts settings per app; and one message, not two, from two nodes.
import { Api } from 'grammy';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MIN_REFUSALS } from '../../src/alerts/checker.ts';
import { alertRound, sendAlerts } from '../../src/bot/alert-sender.ts';
import { tryLeadership } from '../../src/db/leadership.ts';
import { OPERATOR } from '../../src/tokens/registry.ts';
import { startTelegramEmulator, type TelegramServer } from '../helpers/telegram-emulator.ts';
import { alertsOf, BotHarness, buttonsOf, textsOf } from '../helpers/bot-harness.ts';
import { available } from '../helpers/environment.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestDatabase } from '../helpers/postgres.ts';
import { migratedDatabase } from '../helpers/stores.ts';
import { startTestService, tempDir, type TestService } from '../helpers/service.ts';

const BOT_TOKEN = '700000005:alerts-test-token';
const OWNER = 770077;
const STRANGER = 880088;
const HOUR = 3_600_000;
const silent = { warn: () => {}, error: () => {} };

let telegram: TelegramServer;
let api: Api;

beforeAll(async () => {
  telegram = await startTelegramEmulator();
  api = new Api(BOT_TOKEN, { apiRoot: telegram.config.apiURL });
});
afterAll(() => telegram?.stop());

/** what the owner's chat received, in order: text and the data of its button, if any */
function ownerChat(): { text: string; button?: string }[] {
  return telegram.storage.botMessages
    .filter((update) => update.botToken === BOT_TOKEN && String(update.message.chat_id) === String(OWNER))
    .map((update) => {
      const markup = update.message.reply_markup as { inline_keyboard?: { callback_data?: string }[][] } | undefined;
      return { text: String(update.message.text), button: markup?.inline_keyboard?.[0]?.[0]?.callback_data };
    });
}

describe('alerts of one app', () => {
  let service: TestService;
  let token: string;
  let appId: number;
  let subscriptionId: number;
  /** how many messages the owner's chat held when the test began (the emulator's chat outlives each test) */
  let chatBefore: number;
  const owner = { surface: 'bot' as const, telegramId: String(OWNER) };
  /** what the owner's chat received during this test */
  const chatOfTest = () => ownerChat().slice(chatBefore);

  // a fresh service, store and app per test: what the checker has told, the app's events, domains, quota and
  // alert settings all change as a test runs, and each test starts from an app that has not been told anything
  beforeEach(async () => {
    chatBefore = ownerChat().length;
    service = await startTestService();
    const created = await service.services.registry.createApp(
      { appName: 'alerted_app', bot: '@alerted_bot', domains: ['shop.example'], ownerTelegramId: String(OWNER) },
      owner,
    );
    token = created.token;
    appId = created.app.appId;
    subscriptionId = (await service.services.alertSubscriptions.subscribe(appId, String(OWNER))).id;
  });
  afterEach(() => service?.close());

  const round = async (at: Date) => sendAlerts(api, await service.services.alertChecker.check(at), silent);
  const sendEvent = async (origin = 'https://shop.example') =>
    (await postEvents(service.url, makeEvent('alerted_app'), { token, origin })).status;
  /** the app's refusals of this status the store holds (they are written about once a second) */
  const refusalsStored = async (status: number) =>
    (
      await service.store.sql.query<{ n: number }>(
        'SELECT coalesce(sum(count), 0)::int AS n FROM rejections WHERE app_id = $1 AND status = $2',
        [appId, status],
      )
    )[0]!.n;

  it('says once that the integration works, then warns once about silence and once when events are back', async () => {
    const start = new Date();
    await round(start);
    expect(chatOfTest()).toEqual([]); // no traffic yet: nothing to say

    expect(await sendEvent()).toBe(201);
    await service.loaded();
    await round(new Date());
    await round(new Date());
    expect(chatOfTest().map((message) => message.text)).toEqual([
      '✅ Your integration works: the first event of <b>alerted_app</b> has arrived.',
    ]);

    // six hours later (the default) the app is silent; an hour later still, nothing more is said
    await round(new Date(start.getTime() + 7 * HOUR));
    await round(new Date(start.getTime() + 8 * HOUR));
    const silence = chatOfTest().slice(1);
    expect(silence).toHaveLength(1);
    // the last event came a moment after the start: not quite seven hours before
    expect(silence[0]!.text).toContain('⚠️ <b>alerted_app</b> has received no events for 6 h.');

    expect(await sendEvent()).toBe(201);
    await service.loaded();
    await round(new Date());
    await round(new Date());
    expect(
      chatOfTest()
        .slice(2)
        .map((message) => message.text),
    ).toEqual(['✅ Events of <b>alerted_app</b> arrive again.']);
  });

  it('warns about a spike of refusals with the top reason, and its button adds the refused domain', async () => {
    const before = ownerChat().length;
    for (let i = 0; i < MIN_REFUSALS + 2; i++) expect(await sendEvent('https://new.example.com')).toBe(403);
    await expect
      .poll(() => refusalsStored(403), { timeout: 30_000, message: 'the refusals stored' })
      .toBe(MIN_REFUSALS + 2);
    await round(new Date());
    await round(new Date());
    const alerts = ownerChat().slice(before);
    expect(alerts, JSON.stringify(alerts)).toHaveLength(1);
    expect(alerts[0]!.text).toMatch(
      /^⚠️ \d+% of the requests to <b>alerted_app<\/b> were refused in the last 15 minutes/,
    );
    expect(alerts[0]!.text).toContain('Top reason: 403 domain mismatch from https://new.example.com: add this domain?');
    expect(alerts[0]!.button).toBe(`alert:dom:${subscriptionId}`);

    const harness = new BotHarness(service.services);
    // another user pressing the button changes nothing
    expect(textsOf(await harness.click(STRANGER, alerts[0]!.button!))).toContain('not yours');
    const question = await harness.click(OWNER, alerts[0]!.button!);
    expect(textsOf(question)).toContain('Add <b>new.example.com</b> to the domains of <b>alerted_app</b>?');
    expect((await service.services.registry.getApp('alerted_app', owner)).domains).toEqual(['shop.example']);
    expect(textsOf(await harness.click(OWNER, buttonsOf(question)[0]!))).toContain('Added.');
    expect((await service.services.registry.getApp('alerted_app', owner)).domains).toEqual([
      'shop.example',
      'new.example.com',
    ]);
    expect(await sendEvent('https://new.example.com')).toBe(201);
  });

  it('tells once a day that the daily quota is reached', async () => {
    // today's one event fills a quota of one a day
    expect(await sendEvent()).toBe(201);
    await service.loaded();
    await service.services.registry.setQuotas('alerted_app', { eventsPerDay: 1 }, OPERATOR);
    await service.services.quota.sync();
    const before = ownerChat().length;
    for (let i = 0; i < 3; i++) expect(await sendEvent()).toBe(429);
    await expect.poll(() => refusalsStored(429), { timeout: 30_000, message: 'the refusals stored' }).toBe(3);
    await round(new Date());
    await round(new Date());
    const quota = ownerChat()
      .slice(before)
      .filter((message) => message.text.includes('quota'));
    expect(quota).toHaveLength(1);
    expect(quota[0]!.text).toContain('⛔ <b>alerted_app</b> reached its daily quota');
    await service.services.registry.setQuotas('alerted_app', { eventsPerDay: null }, OPERATOR);
  });

  it('sends the weekly digest to whoever opted in, once a week', async () => {
    // this week's one user and event, for the digest to count
    expect(await sendEvent()).toBe(201);
    await service.loaded();
    await service.services.alertSubscriptions.change(subscriptionId, String(OWNER), { digest: true });
    // the Tuesday of next week, when the digest covers this week (Monday to Sunday, UTC): 2 days after a Sunday,
    // 8 after a Monday, 3 after a Saturday
    const now = new Date();
    const weekday = now.getUTCDay();
    const nextTuesday = new Date(now.getTime() + (weekday === 0 ? 2 : 9 - weekday) * 24 * HOUR);
    nextTuesday.setUTCHours(10);
    const before = ownerChat().length;
    await round(nextTuesday);
    await round(new Date(nextTuesday.getTime() + HOUR));
    const digests = ownerChat()
      .slice(before)
      .filter((message) => message.text.startsWith('📊'));
    expect(digests).toHaveLength(1);
    expect(digests[0]!.text).toContain('📊 <b>alerted_app</b>, week of');
    expect(digests[0]!.text).toContain('Users: 1 (new)');
    expect(digests[0]!.text).toMatch(/Top events: app-init \d+/);
  });

  it('/alerts sets per app what the chat is told; only the owner may', async () => {
    const harness = new BotHarness(service.services);
    expect(buttonsOf(await harness.send(OWNER, '/alerts'))).toEqual([`alerts:app:${appId}`]);
    const settings = await harness.click(OWNER, `alerts:app:${appId}`);
    expect(textsOf(settings)).toContain('Alerts of <b>alerted_app</b>');
    expect(buttonsOf(settings)).toContain(`alerts:set:${subscriptionId}:silence`);
    const silence = await harness.click(OWNER, `alerts:set:${subscriptionId}:silence`);
    expect(JSON.stringify(silence)).toContain('No events for: 24 h');
    await harness.click(OWNER, `alerts:set:${subscriptionId}:silence`);
    expect((await service.services.alertSubscriptions.ofChat(subscriptionId, String(OWNER)))?.silenceHours).toBe(null);
    expect(alertsOf(await harness.click(STRANGER, `alerts:set:${subscriptionId}:digest`))).toEqual([
      'These alerts are not yours.',
    ]);
    expect(buttonsOf(await harness.send(STRANGER, '/alerts'))).toEqual([]);
    expect(textsOf(await harness.click(STRANGER, `alerts:app:${appId}`))).toContain('not yours');
  });
});

const postgres = await available('PostgreSQL');

describe.runIf(postgres)('alerts with two nodes', () => {
  let database: TestDatabase;
  const nodes: TestService[] = [];

  beforeAll(async () => {
    database = await migratedDatabase();
    for (let i = 0; i < 2; i++)
      nodes.push(await startTestService({ DATABASE_URL: database.url, SECRET: 'a'.repeat(40), DATA_DIR: tempDir() }));
  });
  afterAll(async () => {
    for (const node of nodes) await node.close();
    await database?.drop();
  });

  async function appWithFirstEvent(node: TestService, appName: string): Promise<number> {
    const { token, app } = await node.services.registry.createApp(
      { appName, bot: '@two_bot', domains: ['two.example'], ownerTelegramId: String(OWNER) },
      OPERATOR,
    );
    await node.services.alertSubscriptions.subscribe(app.appId, String(OWNER));
    const answer = await postEvents(node.url, makeEvent(appName), { token, origin: 'https://two.example' });
    expect(answer.status).toBe(201);
    await node.loaded();
    return app.appId;
  }
  const toldAbout = (appName: string, since: number) =>
    ownerChat()
      .slice(since)
      .filter((message) => message.text.includes(appName))
      .map((message) => message.text);

  it('two checkers at the same moment tell a condition once: the first to record it tells it', async () => {
    const [a, b] = nodes as [TestService, TestService];
    await appWithFirstEvent(a, 'racing_alerts');
    const before = ownerChat().length;
    const now = new Date();
    await Promise.all([a, b].map(async (node) => sendAlerts(api, await node.services.alertChecker.check(now), silent)));
    expect(toldAbout('racing_alerts', before)).toEqual([
      '✅ Your integration works: the first event of <b>racing_alerts</b> has arrived.',
    ]);
  });

  it('only the node holding the alert leadership checks and sends', async () => {
    const [a, b] = nodes as [TestService, TestService];
    await appWithFirstEvent(b, 'led_alerts');
    const before = ownerChat().length;
    const [leaderA, leaderB] = await Promise.all([
      tryLeadership(database.url, 'alerts'),
      tryLeadership(database.url, 'alerts'),
    ]);
    expect([leaderA, leaderB].filter(Boolean)).toHaveLength(1);
    const now = new Date();
    const rounds = await Promise.all([
      alertRound(api, a.services.alertChecker, leaderA, now, silent),
      alertRound(api, b.services.alertChecker, leaderB, now, silent),
    ]);
    expect(rounds.sort()).toEqual([false, true]);
    expect(toldAbout('led_alerts', before)).toHaveLength(1);
    // the leadership passes on when its holder lets go
    await (leaderA ?? leaderB)!.release();
    const next = await tryLeadership(database.url, 'alerts');
    expect(next).not.toBeNull();
    await next!.release();
  });
});

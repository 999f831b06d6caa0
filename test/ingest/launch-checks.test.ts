// Launch checks at ingest on both stores, through the real POST /events: Telegram-signed launch data (the test's own
// key pair as TELEGRAM_PUBLIC_KEY, built as Telegram builds initData) verifies its session and user; an altered field,
// another bot's id, an expired auth_date, user A's launch on an event claiming user B, a replay into another app or
// another session, missing or malformed data, and an app without a bot id: each stored with the same 201 as before,
// counted unverified with its reason. A server key's app-init is never a launch, and its events never count for one.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUCCESS_MESSAGE } from '../../src/events/request/refusals.ts';
import { computeRanking } from '../../src/ranking/compute.ts';
import { OPERATOR } from '../../src/tokens/registry.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND } from '../helpers/stores.ts';
import { alteredLaunch, launchSigner } from '../helpers/telegram-launch.ts';

const signer = launchSigner();
/** the test's own stand-in for the key of Telegram's test environment */
const testEnvironment = launchSigner();
const BOT_A = 7_777_000_001;
const BOT_B = 7_777_000_002;
let appCounter = 0;

describe(`launch checks on ${SERVICE_BACKEND.name}`, () => {
  let service: TestService;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const backend = await SERVICE_BACKEND.open();
    drop = backend.drop;
    service = await startTestService({
      ...backend.env,
      TELEGRAM_PUBLIC_KEY: signer.publicKeyHex,
      TELEGRAM_TEST_PUBLIC_KEY: testEnvironment.publicKeyHex,
    });
    expectProjectStore(service.store);
  });
  afterAll(async () => {
    await service?.close();
    await drop?.();
  });

  async function newApp(botId: number | null) {
    const appName = `checks_${++appCounter}`;
    const { token, app } = await service.services.registry.createApp(
      { appName, bot: '@checks_bot', botId: botId === null ? null : String(botId), domains: ['app.example.com'] },
      OPERATOR,
    );
    const send = async (events: Record<string, unknown>[]) => {
      const answer = await postEvents(service.url, events, { token });
      expect(answer.status, answer.text).toBe(201);
      expect(answer.json).toEqual({ message: SUCCESS_MESSAGE });
    };
    const launch = (user: number, initData?: unknown, session = crypto.randomUUID()) =>
      makeEvent(appName, {
        user_id: user,
        session_id: session,
        ...(initData === undefined ? {} : { init_data: initData }),
      });
    const outcomes = async () => {
      await service.loaded();
      const rows = await service.store.sql.query<{ outcome: string; n: number }>(
        'SELECT outcome, sum(launches)::int AS n FROM daily_launch_checks WHERE app_id = $1 GROUP BY 1',
        [app.appId],
      );
      return Object.fromEntries(rows.map((row) => [row.outcome, row.n]));
    };
    const verified = async () =>
      (
        await service.store.sql.query<{ sessions: number; users: number; events: number }>(
          `SELECT count(*)::int AS sessions, count(DISTINCT user_key)::int AS users, coalesce(sum(events), 0)::int AS events
           FROM verified_sessions WHERE app_id = $1`,
          [app.appId],
        )
      )[0]!;
    const stored = async () =>
      (
        await service.store.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE app_id = $1', [
          app.appId,
        ])
      )[0]!.n;
    return { appName, token, send, launch, outcomes, verified, stored };
  }

  const signed = (botId: number, user: number, authDate?: number) =>
    signer.sign({ botId, user: { id: user, first_name: 'Ann', username: 'ann_checks' }, authDate });

  it('verifies a launch Telegram signed for the app’s bot and user, and counts its session’s events', async () => {
    const app = await newApp(BOT_A);
    const session = crypto.randomUUID();
    const events = [
      app.launch(1, signed(BOT_A, 1), session),
      makeEvent(app.appName, { user_id: 1, session_id: session, event_name: 'connection-completed' }),
    ];
    await app.send(events);
    // a retry of the same request (its answer lost) stores and counts nothing again
    await app.send(events);
    expect(await app.outcomes()).toEqual({ verified: 1 });
    expect(await app.verified()).toEqual({ sessions: 1, users: 1, events: 2 });
  });

  it('stores each bad launch with 201 and counts it unverified, with its reason', async () => {
    const app = await newApp(BOT_A);
    const now = Math.floor(Date.now() / 1000);
    await app.send([
      app.launch(1, alteredLaunch(signed(BOT_A, 1), 'start_param', 'promo')), // an altered field
      app.launch(2, signed(BOT_B, 2)), // another bot's launch, verified nowhere here
      app.launch(3, signed(BOT_A, 3, now - 2 * 86_400)), // signed two days ago
      app.launch(4, signed(BOT_A, 5)), // user 5's launch on an event claiming user 4
      app.launch(6), // no launch data (the official client)
      app.launch(7, 'user=%7B%22id%22%3A7%7D&auth_date=1'), // no signature
      app.launch(8, { user: 8 }), // not a string
      app.launch(9, 'x'.repeat(20_000)), // far longer than launch data
    ]);
    expect(await app.outcomes()).toEqual({
      bad_signature: 2,
      expired: 1,
      other_user: 1,
      no_proof: 1,
      malformed: 3,
    });
    expect(await app.verified()).toEqual({ sessions: 0, users: 0, events: 0 });
    expect(await app.stored()).toBe(8);
  });

  it('verifies one session per signature: a replay into another session or another app adds no session or user', async () => {
    const first = await newApp(BOT_A);
    const other = await newApp(BOT_B);
    const initData = signed(BOT_A, 1);
    await first.send([first.launch(1, initData)]);
    await first.send([first.launch(1, initData), first.launch(1, initData)]);
    await other.send([other.launch(1, initData)]);
    expect(await first.outcomes()).toEqual({ verified: 1, replayed: 2 });
    expect(await first.verified()).toEqual({ sessions: 1, users: 1, events: 1 });
    // signed for the first app's bot: in an app of another bot it is that launch replayed
    expect(await other.outcomes()).toEqual({ other_bot: 1 });
    // an app naming the same bot verifies nothing with a launch the first app counted
    const copy = await newApp(BOT_A);
    await copy.send([copy.launch(1, initData)]);
    expect(await copy.outcomes()).toEqual({ replayed: 1 });
    expect(await copy.verified()).toEqual({ sessions: 0, users: 0, events: 0 });
  });

  it('counts launches signed in Telegram’s test environment apart: never verified, never ranked in the catalog', async () => {
    const app = await newApp(BOT_A);
    const testLaunch = (user: number) => testEnvironment.sign({ botId: BOT_A, user: { id: user, first_name: 'Tess' } });
    // enough test accounts to rank, were they counted
    const users = Array.from({ length: 40 }, (_, i) => 100 + i);
    await app.send(users.map((user) => ({ ...app.launch(user, testLaunch(user)), init_data_env: 'test' })));
    await app.send([
      app.launch(1, testLaunch(1)), // the test key's signature reported as a production launch
      { ...app.launch(2, signed(BOT_A, 2)), init_data_env: 'test' }, // a production launch reported as a test one
    ]);
    expect(await app.outcomes()).toEqual({ test_environment: 40, bad_signature: 2 });
    expect(await app.verified()).toEqual({ sessions: 0, users: 0, events: 0 });
    await computeRanking(service.store.sql);
    const { apps } = (await (await fetch(`${service.url}/api/catalog`)).json()) as {
      apps: { app_name: string }[];
    };
    // an app enters the catalog with a verified launch: one with test accounts alone never does
    expect(apps.map((listed) => listed.app_name)).not.toContain(app.appName);
  });

  it('says why nothing verifies in an app without a bot id, and verifies once the id is set', async () => {
    const app = await newApp(null);
    await app.send([app.launch(1, signed(BOT_A, 1))]);
    expect(await app.outcomes()).toEqual({ no_bot_id: 1 });
    await service.services.registry.setBotId(app.appName, String(BOT_A), OPERATOR);
    await app.send([app.launch(2, signed(BOT_A, 2))]);
    expect(await app.outcomes()).toEqual({ no_bot_id: 1, verified: 1 });
  });

  it("never checks a server key's app-init, and never counts its events for a verified session", async () => {
    const app = await newApp(BOT_A);
    const { key } = await service.services.serverKeys.create(app.appName, OPERATOR);
    const session = crypto.randomUUID();
    await app.send([app.launch(1, signed(BOT_A, 1), session)]);
    const fromServer = await postEvents(
      service.url,
      [
        makeEvent(app.appName, { user_id: 1, session_id: session, event_name: 'transaction-signed' }),
        makeEvent(app.appName, { user_id: 2, init_data: signed(BOT_A, 2) }),
      ],
      { origin: null, headers: { authorization: `Bearer ${key}` } },
    );
    expect(fromServer.status, fromServer.text).toBe(201);
    expect(await app.outcomes()).toEqual({ verified: 1 });
    expect(await app.verified()).toEqual({ sessions: 1, users: 1, events: 1 });
    const [row] = await service.store.sql.query<{ signed: boolean }>(
      'SELECT bool_or(transaction_signed) AS signed FROM verified_sessions WHERE session_id = $1',
      [session],
    );
    expect(row!.signed).toBe(false);
  });

  it('fills in the bot id the integrator’s bot reports with its server key, never replacing one that is set', async () => {
    const app = await newApp(null);
    const { key } = await service.services.serverKeys.create(app.appName, OPERATOR);
    const report = (botId: string) =>
      postEvents(service.url, [makeEvent(app.appName, { event_name: 'bot-start', user_id: 1 })], {
        origin: null,
        headers: { authorization: `Bearer ${key}`, 'tma-bot-id': botId },
      });
    expect((await report('not-a-number')).status).toBe(201);
    expect((await report(String(BOT_B))).status).toBe(201);
    const botIdOf = async () => (await service.services.registry.getApp(app.appName, OPERATOR)).botId;
    await expect.poll(botIdOf).toBe(String(BOT_B));
    await service.services.registry.setBotId(app.appName, String(BOT_A), OPERATOR);
    // a token's request never sets it, and a server key's does not replace the owner's
    const withToken = await postEvents(service.url, [makeEvent(app.appName)], {
      token: app.token,
      headers: { 'tma-bot-id': '123' },
    });
    expect(withToken.status).toBe(201);
    expect(await botIdOf()).toBe(String(BOT_A));
  });
});

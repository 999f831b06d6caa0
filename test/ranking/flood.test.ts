// The catalog against a flood of made-up users through apps' public tokens, on both stores, through the real
// POST /events within the default rate limit: 10,000 made-up users (app-inits without launch data, with forged
// signatures, with a real user's launch replayed, each "connecting a wallet" and "signing a transaction") leave every
// app's score, rank and verified users exactly as they were, and an app of 30 verified users stays above one of 5
// verified users and 10,000 unverified ones. The catalog before and after is printed.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeRanking } from '../../src/ranking/compute.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND } from '../helpers/stores.ts';
import { alteredLaunch, launchSigner } from '../helpers/telegram-launch.ts';

const signer = launchSigner();
const MADE_UP_USERS = 10_000;
const EVENTS_PER_REQUEST = 100;

interface CatalogApp {
  rank: number | null;
  app_name: string;
  score: number | null;
  verified_users_30d: number;
  unverified_users_30d: number;
}

describe(`the catalog against made-up users on ${SERVICE_BACKEND.name}`, () => {
  let service: TestService;
  let drop: () => Promise<void>;
  const tokens: Record<string, string> = {};
  const botIds: Record<string, number> = { honest: 7_000_000_001, busy: 7_000_000_002, small: 7_000_000_003 };
  /** a real user's launch of each app, which the flood replays */
  const realLaunch: Record<string, string> = {};

  beforeAll(async () => {
    const backend = await SERVICE_BACKEND.open();
    drop = backend.drop;
    service = await startTestService({ ...backend.env, TELEGRAM_PUBLIC_KEY: signer.publicKeyHex });
    expectProjectStore(service.store);
    const verifiedUsers = { honest: 30, busy: 25, small: 5 };
    for (const [app, users] of Object.entries(verifiedUsers)) {
      ({ token: tokens[app] } = await service.services.registry.createApp(
        { appName: app, bot: `@${app}_flood_bot`, botId: String(botIds[app]), domains: ['app.example.com'] },
        { surface: 'cli' },
      ));
      // real users, each opening the app once Telegram signed, a few connecting a wallet and signing
      const events = Array.from({ length: users }, (_, i) => {
        const user = 1_000 + i;
        const sessionId = crypto.randomUUID();
        const initData = signer.sign({ botId: botIds[app]!, user: { id: user, first_name: 'Real' } });
        realLaunch[app] ??= initData;
        return [
          makeEvent(app, { user_id: user, session_id: sessionId, init_data: initData }),
          ...(i % 5 === 0 ? ['connection-completed', 'transaction-signed'] : []).map((name) =>
            makeEvent(app, { user_id: user, session_id: sessionId, event_name: name }),
          ),
        ];
      }).flat();
      expect((await postEvents(service.url, events, { token: tokens[app] })).status).toBe(201);
    }
    await service.loaded();
  });
  afterAll(async () => {
    await service?.close();
    await drop?.();
  });

  async function catalog(): Promise<CatalogApp[]> {
    await computeRanking(service.store.sql);
    const body = (await (await fetch(`${service.url}/api/catalog`)).json()) as { apps: CatalogApp[] };
    return body.apps.map(({ rank, app_name, score, verified_users_30d, unverified_users_30d }) => ({
      rank,
      app_name,
      score,
      verified_users_30d,
      unverified_users_30d,
    }));
  }

  /** made-up users through an app's public token, 100 events a request: each a launch, a wallet and a signature */
  async function flood(app: string): Promise<number> {
    const events = Array.from({ length: MADE_UP_USERS }, (_, i) => {
      const user = 50_000_000 + i;
      const sessionId = crypto.randomUUID();
      // a third send no launch data, a third a real launch with its user changed, a third a real user's launch as theirs
      const initData =
        i % 3 === 0
          ? undefined
          : i % 3 === 1
            ? alteredLaunch(realLaunch[app]!, 'user', JSON.stringify({ id: user, first_name: 'Fake' }))
            : realLaunch[app];
      return [
        makeEvent(app, { user_id: user, session_id: sessionId, ...(initData ? { init_data: initData } : {}) }),
        makeEvent(app, { user_id: user, session_id: sessionId, event_name: 'connection-completed' }),
        makeEvent(app, {
          user_id: user,
          session_id: sessionId,
          event_name: 'transaction-signed',
          // backdated a few days: "returning"
          client_timestamp: String(Date.now() - (i % 6) * 86_400_000),
        }),
      ];
    }).flat();
    let requests = 0;
    for (let at = 0; at < events.length; at += EVENTS_PER_REQUEST) {
      const answer = await postEvents(service.url, events.slice(at, at + EVENTS_PER_REQUEST), { token: tokens[app] });
      expect(answer.status, answer.text).toBe(201);
      requests++;
    }
    await service.loaded();
    return requests;
  }

  it('leaves every score, rank and verified user as it was; 30 verified users rank above 5 and 10,000 made up', async () => {
    const before = await catalog();
    expect(before.map((app) => [app.rank, app.app_name, app.verified_users_30d])).toEqual([
      [1, 'honest', 30],
      [2, 'busy', 25],
      [null, 'small', 5],
    ]);
    const requests = (await flood('busy')) + (await flood('small'));
    const after = await catalog();
    console.log(
      `[flood on ${service.store.kind}] ${requests} requests, ${2 * MADE_UP_USERS} made-up users\n` +
        `before: ${JSON.stringify(before)}\nafter:  ${JSON.stringify(after)}`,
    );
    const scored = (apps: CatalogApp[]) => apps.map(({ unverified_users_30d: _shown, ...rest }) => rest);
    expect(scored(after)).toEqual(scored(before));
    // the made-up users are shown, as unverified
    expect(after.find((app) => app.app_name === 'busy')!.unverified_users_30d).toBe(MADE_UP_USERS);
    expect(after.find((app) => app.app_name === 'small')!.unverified_users_30d).toBe(MADE_UP_USERS);
    // what the checks saw: none of the flood's launches verified
    const [{ outcomes }] = await service.store.sql.query<{ outcomes: Record<string, number> }>(
      `SELECT jsonb_object_agg(outcome, n) AS outcomes FROM (
         SELECT outcome, sum(launches)::int AS n FROM daily_launch_checks c JOIN apps a ON a.id = c.app_id
         WHERE a.app_name = 'small' GROUP BY outcome) t`,
    );
    expect(outcomes).toEqual({ verified: 5, no_proof: 3_334, bad_signature: 3_333, other_user: 3_333 });
  });
});

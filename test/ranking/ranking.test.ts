// The catalog ranking on embedded PGlite and a PostgreSQL server: a seeded data set of verified and unverified launches
// with answers worked out by hand, unranked apps, apps without a verified launch left out, a bot held by the app with
// the most verified users, replaced and vanished rows, the public JSON and HTML, key reads, the schedule.
import crypto from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { Store } from '../../src/db/store.ts';
import { named } from '../../src/db/named-sql.ts';
import type { SqlRunner } from '../../src/db/sql.ts';
import { SqlEventPlane, type EventRow } from '../../src/events/write/event-plane.ts';
import { STORE_BACKEND } from '../helpers/stores.ts';
import { readCatalog } from '../../src/ranking/catalog.ts';
import { USERS_QUERY, VERIFIED_QUERY, computeRanking, type RankedApp } from '../../src/ranking/compute.ts';
import { registerCatalogRoutes } from '../../src/site/catalog-routes.ts';
import { startRankingSchedule } from '../../src/ranking/schedule.ts';
import { eventRow } from '../helpers/events.ts';

// Windows for NOW: 7 days = 2026-11-24..2026-11-30, 30 days = 2026-11-01..2026-11-30 (UTC days).
const NOW = new Date('2026-11-30T12:00:00Z');
const EVIL_NAME = '<b>foxtrot</b> & "co"';

const userKey = (appId: number, user: number) =>
  crypto.createHash('sha256').update(`${appId}:${user}`).digest().subarray(0, 16);

/**
 * A launch of `user` (a small number, distinct per app) on a UTC day: its app-init, verified by Telegram unless
 * `verified` is false, then the page's other events of that session
 */
function launch(appId: number, user: number, day: string, others: string[] = [], verified = true): EventRow[] {
  const sessionId = crypto.randomUUID();
  const at = (name: string) =>
    eventRow(appId, {
      receivedAt: new Date(`${day}T10:00:00Z`),
      eventName: name,
      sessionId,
      userKey: userKey(appId, user),
      isSuccess: name === 'transaction-signed',
    });
  const init = {
    ...at('app-init'),
    ...(verified
      ? { launchCheck: 'verified', launchDay: day, launchProof: crypto.randomBytes(16) }
      : { launchCheck: 'no_proof' }),
  };
  return [init, ...others.map(at)];
}

const users = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

// the documented formula, written out independently of src/ranking
const L = (x: number, target: number) => Math.min(1, Math.log(1 + x) / Math.log(1 + target));
const score = (p: {
  reach: number;
  retention: number;
  engagement: number;
  connections: number;
  transactions: number;
}) => 100 * (0.25 * p.reach + 0.25 * p.retention + 0.15 * p.engagement + 0.15 * p.connections + 0.2 * p.transactions);

const EXPECTED = {
  // 60 verified users, each seen once, on the last day: one app-init each
  alpha: score({ reach: L(60, 1e5), retention: 0, engagement: L(1, 100), connections: 0, transactions: 0 }),
  // 30 verified users on 11-28 and 11-29 (app-init + custom-event each day), 10 of them also on 11-05;
  // 5 of them connected a wallet, 3 signed a transaction (and 4 restores) in the last week: 132 events in 7 days, 142
  // in 30
  bravo: score({
    reach: L(30, 1e5),
    retention: 1,
    engagement: (L(132 / 30, 100) + L(142 / 30, 100)) / 2,
    connections: L(5, 1e4),
    transactions: L(3, 1e4),
  }),
  // 25 verified users on 11-10 and 11-12, nothing in the last week: the 7-day half of every part is 0;
  // 50 app-init + 20 connections + 10 signed transactions = 80 events
  charlie: score({
    reach: L(25, 1e5) / 2,
    retention: 1 / 2,
    engagement: L(80 / 25, 100) / 2,
    connections: L(20, 1e4) / 2,
    transactions: L(10, 1e4) / 2,
  }),
};

describe(`catalog ranking on ${STORE_BACKEND.name}`, () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  /** a store of its own for one test */
  async function fresh(): Promise<Store> {
    const { store, cleanup } = await STORE_BACKEND.open();
    cleanups.push(cleanup);
    return store;
  }

  /** a store of its own holding the seeded apps and their events, and the ranking computed from them at NOW */
  async function seeded(): Promise<{ store: Store; ids: Record<string, number>; first: RankedApp[] }> {
    const store = await fresh();
    const ids: Record<string, number> = {};
    for (const name of ['alpha', 'able', 'bravo', 'charlie', 'delta', 'echo', 'mallory', 'copycat', EVIL_NAME]) {
      const bot = name === EVIL_NAME ? '@foxtrot_bot' : name === 'copycat' ? '@Bravo_App_Bot' : `@${name}_app_bot`;
      // registered as the surfaces register an app: with a token that works
      const token = { hash: `hash-of-${name}`, prefix: `tma_${name.slice(0, 4)}` };
      ids[name] = (
        await store.prisma.app.create({
          data: { appName: name, bot, domains: ['app.example.com'], tokens: { create: token } },
        })
      ).id;
    }
    const { alpha, able, bravo, charlie, delta, echo, mallory, copycat } = ids as Record<string, number>;
    const rows: EventRow[] = [
      // alpha, and able with exactly the same data (a tie: ordered by name)
      ...users(0, 59).flatMap((u) => launch(alpha!, u, '2026-11-30')),
      ...users(0, 59).flatMap((u) => launch(able!, u, '2026-11-30')),
      // outside the windows: ignored (the day before the 30 days, the day after `now`)
      ...users(100, 149).flatMap((u) => launch(alpha!, u, '2026-10-31')),
      ...users(0, 9).flatMap((u) => launch(alpha!, u, '2026-12-01', ['transaction-signed'])),
      ...users(200, 209).flatMap((u) => launch(alpha!, u, '2026-12-01')),
      // bravo
      ...users(0, 29).flatMap((u) =>
        launch(bravo!, u, '2026-11-28', ['custom-event', ...(u < 5 ? ['connection-completed'] : [])]),
      ),
      ...users(0, 29).flatMap((u) =>
        launch(bravo!, u, '2026-11-29', [
          'custom-event',
          ...(u < 3 ? ['transaction-signed'] : []),
          ...(u < 4 ? ['connection-restoring-completed'] : []),
        ]),
      ),
      ...users(0, 9).flatMap((u) => launch(bravo!, u, '2026-11-05')),
      // charlie
      ...users(0, 24).flatMap((u) => [
        ...launch(charlie!, u, '2026-11-10'),
        ...launch(charlie!, u, '2026-11-12', [
          ...(u < 20 ? ['connection-completed'] : []),
          ...(u < 10 ? ['transaction-signed'] : []),
        ]),
      ]),
      // delta: too few verified users
      ...users(0, 4).flatMap((u) => launch(delta!, u, '2026-11-30')),
      // echo: busy, but nothing Telegram signed: not in the catalog
      ...users(0, 99).flatMap((u) => launch(echo!, u, '2026-11-30', ['connection-completed'], false)),
      // mallory: 5 verified users and 200 made-up ones "returning" with wallets and signatures
      ...users(0, 4).flatMap((u) => launch(mallory!, u, '2026-11-30')),
      ...users(100, 299).flatMap((u) => [
        ...launch(mallory!, u, '2026-11-29', ['connection-completed', 'transaction-signed'], false),
        ...launch(mallory!, u, '2026-11-30', ['transaction-signed'], false),
      ]),
      // copycat names bravo's bot with fewer verified users: listed without it
      ...users(0, 1).flatMap((u) => launch(copycat!, u, '2026-11-30')),
      // the escaped name: listed, unranked
      ...users(0, 2).flatMap((u) => launch(ids[EVIL_NAME]!, u, '2026-11-30')),
    ];
    const events = new SqlEventPlane(store.sql);
    expect(await events.insert(rows)).toBe(rows.length);
    return { store, ids, first: await computeRanking(store.sql, NOW) };
  }

  /** one seeded store for the tests that only read it (those that change it seed their own) */
  let readOnlySeed: ReturnType<typeof seeded> | undefined;
  const seededToRead = () => (readOnlySeed ??= seeded());

  it('ranks the seeded apps in the expected order with the expected components', async () => {
    const { first } = await seededToRead();
    expect(first.map((app) => [app.rank, app.appName])).toEqual([
      [1, 'bravo'],
      [2, 'charlie'],
      [3, 'able'],
      [4, 'alpha'],
      [null, EVIL_NAME],
      [null, 'copycat'],
      [null, 'delta'],
      [null, 'mallory'],
    ]);
    const byName = Object.fromEntries(first.map((app) => [app.appName, app]));
    expect(byName.bravo!.score).toBeCloseTo(EXPECTED.bravo, 2);
    expect(byName.charlie!.score).toBeCloseTo(EXPECTED.charlie, 2);
    expect(byName.alpha!.score).toBeCloseTo(EXPECTED.alpha, 2);
    expect(byName.able!.score).toBe(byName.alpha!.score);
    // the hand-computed values, rounded, as a sanity check on the expressions above
    expect([EXPECTED.bravo, EXPECTED.charlie, EXPECTED.alpha].map((value) => Math.round(value * 10) / 10)).toEqual([
      44, 23.5, 11.2,
    ]);

    expect(byName.bravo!.components.window_7d).toEqual({
      from: '2026-11-24',
      to: '2026-11-30',
      verified_users: 30,
      returning_users: 30,
      retention: 1,
      events: 132,
      events_per_user: 4.4,
      wallet_connections: 5,
      signed_transactions: 3,
      active_users: 30,
      unverified_users: 0,
    });
    expect(byName.bravo!.components.window_30d).toEqual({
      from: '2026-11-01',
      to: '2026-11-30',
      verified_users: 30,
      returning_users: 30,
      retention: 1,
      events: 142,
      events_per_user: 4.7333,
      wallet_connections: 5,
      signed_transactions: 3,
      active_users: 30,
      unverified_users: 0,
    });
    expect(byName.charlie!.components.window_7d).toMatchObject({
      verified_users: 0,
      returning_users: 0,
      retention: 0,
      events: 0,
      events_per_user: 0,
    });
    expect(byName.charlie!.components.window_30d).toMatchObject({
      verified_users: 25,
      returning_users: 25,
      retention: 1,
      events: 80,
      events_per_user: 3.2,
      wallet_connections: 20,
      signed_transactions: 10,
    });
    expect(byName.charlie!.components.parts).toEqual({
      reach: expect.closeTo(L(25, 1e5) / 2, 4),
      retention: 0.5,
      engagement: expect.closeTo(L(3.2, 100) / 2, 4),
      wallet_connections: expect.closeTo(L(20, 1e4) / 2, 4),
      signed_transactions: expect.closeTo(L(10, 1e4) / 2, 4),
    });
    // out-of-window events of alpha (the day before, the day after) are not counted
    expect(byName.alpha!.components.window_30d).toMatchObject({
      verified_users: 60,
      returning_users: 0,
      events: 60,
      signed_transactions: 0,
    });
    expect(byName.alpha!.components.unranked_reason).toBeNull();
  });

  it('lists apps with too few verified users as unranked, with the reason, and apps without a verified launch not at all', async () => {
    const { store, ids, first } = await seededToRead();
    const byName = Object.fromEntries(first.map((app) => [app.appName, app]));
    expect(byName.delta).toMatchObject({ rank: null, score: null });
    expect(byName.delta!.components.unranked_reason).toBe('Fewer than 20 verified users in the last 30 days (5).');
    expect(byName.delta!.components.window_7d.verified_users).toBe(5);
    expect(byName.echo).toBeUndefined();
    const stored = await store.sql.query<{ app_id: number; rank: number | null; score: number | null }>(
      'SELECT app_id, rank, score FROM app_scores ORDER BY app_id',
    );
    expect(stored).toHaveLength(8);
    expect(stored.some((row) => row.app_id === ids.echo)).toBe(false);
  });

  it('counts made-up users as unverified: 200 of them returning with wallets and signatures leave an app of 5 verified users unranked', async () => {
    const { first } = await seededToRead();
    const mallory = first.find((app) => app.appName === 'mallory')!;
    expect(mallory).toMatchObject({ rank: null, score: null });
    expect(mallory.components.window_30d).toMatchObject({
      verified_users: 5,
      returning_users: 0,
      events: 5,
      wallet_connections: 0,
      signed_transactions: 0,
      active_users: 205,
      unverified_users: 200,
    });
    expect(mallory.components.unranked_reason).toBe('Fewer than 20 verified users in the last 30 days (5).');
  });

  it('lists a bot under the app with the most verified users naming it, in any spelling; the other app without it', async () => {
    const { first } = await seededToRead();
    const byName = Object.fromEntries(first.map((app) => [app.appName, app]));
    expect(byName.bravo).toMatchObject({ bot: '@bravo_app_bot', components: { bot_listed: true } });
    expect(byName.copycat).toMatchObject({ bot: null, components: { bot_listed: false } });
  });

  it('reads only rollups: the same answer without the raw events', async () => {
    const { store, first } = await seeded();
    await store.sql.query('DELETE FROM events');
    const again = await computeRanking(store.sql, NOW);
    expect(again).toEqual(first);
  });

  it('readCatalog returns ranked apps by rank, then unranked apps by name, with components', async () => {
    const { store, first } = await seededToRead();
    const catalog = await readCatalog(store.sql);
    expect(catalog.computedAt).toEqual(NOW);
    expect(catalog.apps.map((app) => [app.rank, app.appName, app.bot])).toEqual([
      [1, 'bravo', '@bravo_app_bot'],
      [2, 'charlie', '@charlie_app_bot'],
      [3, 'able', '@able_app_bot'],
      [4, 'alpha', '@alpha_app_bot'],
      [null, EVIL_NAME, '@foxtrot_bot'],
      [null, 'copycat', null],
      [null, 'delta', '@delta_app_bot'],
      [null, 'mallory', '@mallory_app_bot'],
    ]);
    expect(catalog.apps[0]!.components).toEqual(first[0]!.components);
    expect(catalog.apps[0]!.score).toBe(first[0]!.score);
  });

  it('serves /api/catalog and /catalog over HTTP, publicly, with escaped app names', async () => {
    const { store } = await seededToRead();
    const app: FastifyInstance = Fastify();
    registerCatalogRoutes(app, store.sql);
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      const json = await fetch(`${base}/api/catalog`);
      expect(json.status).toBe(200);
      expect(json.headers.get('content-type')).toMatch(/application\/json/);
      const body = (await json.json()) as {
        computed_at: string;
        formula: string;
        apps: {
          rank: number | null;
          app_name: string;
          bot_url: string;
          score: number | null;
          unranked_reason: string | null;
          components: RankedApp['components'];
        }[];
      };
      expect(body.computed_at).toBe(NOW.toISOString());
      expect(body.formula).toMatch(/log/);
      expect(body).toMatchObject({
        weights: { reach: 0.25, retention: 0.25, engagement: 0.15, wallet_connections: 0.15, signed_transactions: 0.2 },
        targets: {
          verified_users: 100_000,
          events_per_user: 100,
          wallet_connections: 10_000,
          signed_transactions: 10_000,
        },
        counts: 'verified',
        min_verified_users_30d: 20,
      });
      expect(body.formula).toMatch(/only verified activity counts/);
      expect(body.apps.map((entry) => entry.app_name)).toEqual([
        'bravo',
        'charlie',
        'able',
        'alpha',
        EVIL_NAME,
        'copycat',
        'delta',
        'mallory',
      ]);
      expect(body.apps[0]).toMatchObject({ rank: 1, bot_url: 'https://t.me/bravo_app_bot', unranked_reason: null });
      expect(body.apps[0]!.score).toBeCloseTo(EXPECTED.bravo, 2);
      expect(body.apps[0]!.components.window_30d.wallet_connections).toBe(5);
      expect(body.apps[0]!.components.parts.retention).toBe(1);
      expect(body.apps[5]).toMatchObject({ app_name: 'copycat', bot: null, bot_url: null });
      expect(body.apps[7]).toMatchObject({
        rank: null,
        score: null,
        verified_users_30d: 5,
        unverified_users_30d: 200,
        unranked_reason: 'Fewer than 20 verified users in the last 30 days (5).',
      });

      const html = await fetch(`${base}/catalog`);
      expect(html.status).toBe(200);
      expect(html.headers.get('content-type')).toMatch(/text\/html/);
      const text = await html.text();
      expect(text).toContain('&lt;b&gt;foxtrot&lt;/b&gt; &amp; &quot;co&quot;');
      expect(text).not.toContain('<b>foxtrot');
      expect(text).toContain('href="https://t.me/bravo_app_bot"');
      expect(text).toContain('Fewer than 20 verified users in the last 30 days (5).');
      expect(text).toContain('Only <strong>verified</strong> activity counts');
      expect(text).toContain('How the score works');
      expect(text).toContain('name="viewport"');
      // ranked apps in rank order, unranked ones after them
      const order = ['bravo', 'charlie', 'able_app_bot', 'alpha_app_bot', 'foxtrot', 'copycat', 'delta', 'mallory'].map(
        (needle) => text.indexOf(needle),
      );
      expect(order.every((position) => position > 0)).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
    } finally {
      await app.close();
    }
  });

  it('replaces the rows on recomputation and drops deleted apps', async () => {
    const { store, ids } = await seeded();
    await store.prisma.app.delete({ where: { id: ids.charlie! } });
    const later = new Date('2026-11-30T12:15:00Z');
    const ranked = await computeRanking(store.sql, later);
    expect(ranked.filter((app) => app.rank !== null).map((app) => [app.rank, app.appName])).toEqual([
      [1, 'bravo'],
      [2, 'able'],
      [3, 'alpha'],
    ]);
    const rows = await store.sql.query<{ app_id: number; computed_at: Date }>(
      'SELECT app_id, computed_at FROM app_scores ORDER BY app_id',
    );
    expect(rows).toHaveLength(7);
    expect(rows.some((row) => row.app_id === ids.charlie)).toBe(false);
    expect(rows.every((row) => new Date(row.computed_at).getTime() === later.getTime())).toBe(true);
    const catalog = await readCatalog(store.sql);
    expect(catalog.apps.map((app) => app.appName)).not.toContain('charlie');
  });

  it('leaves out at once an app its owner takes out of the catalog, or whose token was revoked, and ranks the rest without a gap', async () => {
    const { store, ids, first } = await seeded();
    expect(first.filter((app) => app.rank !== null).map((app) => app.appName)).toEqual([
      'bravo',
      'charlie',
      'able',
      'alpha',
    ]);
    await store.prisma.app.update({ where: { id: ids.charlie! }, data: { catalogListed: false } });
    await store.prisma.token.updateMany({ where: { appId: ids.delta! }, data: { revokedAt: new Date() } });
    // before the next computation: the catalog already leaves them out, the others move up
    const now = await readCatalog(store.sql);
    expect(now.apps.map((app) => [app.rank, app.appName])).toEqual([
      [1, 'bravo'],
      [2, 'able'],
      [3, 'alpha'],
      [null, EVIL_NAME],
      [null, 'copycat'],
      [null, 'mallory'],
    ]);
    // and the next computation ranks without them
    const again = await computeRanking(store.sql, NOW);
    expect(again.map((app) => app.appName)).not.toContain('charlie');
    expect(again.map((app) => app.appName)).not.toContain('delta');
    expect(again.find((app) => app.appName === 'able')!.rank).toBe(2);
    // listed again: back in
    await store.prisma.app.update({ where: { id: ids.charlie! }, data: { catalogListed: true } });
    await computeRanking(store.sql, NOW);
    expect((await readCatalog(store.sql)).apps.find((app) => app.appName === 'charlie')!.rank).toBe(2);
  });

  it('moves the windows with `now`: a month later no app is listed, and with no apps the table empties', async () => {
    const { store } = await seeded();
    expect(await computeRanking(store.sql, new Date('2027-01-02T00:00:00Z'))).toEqual([]);
    expect((await readCatalog(store.sql)).apps).toEqual([]);
    await store.sql.query('DELETE FROM apps');
    expect(await computeRanking(store.sql, NOW)).toEqual([]);
    expect(await readCatalog(store.sql)).toEqual({ computedAt: null, apps: [] });
  });

  it('reads the rollups by their keys on a larger data set', async () => {
    const store = await fresh();
    // 40 apps × 60 days × 120 users a day written straight into the rollups (288,000 daily_users rows and as many
    // verified sessions), one app per statement to stay inside the server's statement timeout
    const bulk = await store.sql.query<{ id: number }>(
      `INSERT INTO apps (app_name, bot, domains, updated_at)
       SELECT 'bulk_' || lpad(g::text, 2, '0'), '@bulk_' || g || '_bot', ARRAY['bulk.example.com'], now()
       FROM generate_series(1, 40) AS g RETURNING id`,
    );
    await store.sql.query(
      `INSERT INTO tokens (app_id, hash, prefix) SELECT id, 'bulk-hash-' || id, 'tma_bulk' FROM apps WHERE app_name LIKE 'bulk_%'`,
    );
    for (const { id } of bulk) {
      await store.sql.exec(`
        INSERT INTO daily_users (app_id, day, user_key)
          SELECT ${id}, DATE '2026-11-30' - d, int4send((d * 37 + u) % 400) FROM generate_series(0, 59) AS d, generate_series(1, 120) AS u;
        INSERT INTO daily_app_stats (app_id, day, users, sessions)
          SELECT ${id}, DATE '2026-11-30' - d, 120, 120 FROM generate_series(0, 59) AS d;
        INSERT INTO verified_sessions (app_id, session_id, day, user_key, proof, events, wallet_connected, transaction_signed)
          SELECT ${id}, gen_random_uuid(), DATE '2026-11-30' - d, int4send((d * 37 + u) % 400), int4send(${id}) || int4send(d) || int4send(u), 3, u % 3 = 0, u % 5 = 0
          FROM generate_series(0, 59) AS d, generate_series(1, 120) AS u;`);
    }
    await store.sql.exec('ANALYZE daily_users; ANALYZE daily_app_stats; ANALYZE verified_sessions; ANALYZE apps;');

    const started = performance.now();
    const ranked = await computeRanking(store.sql, NOW);
    const ms = performance.now() - started;
    console.log(`computeRanking over 40 apps, 288,000 verified sessions (${store.kind}): ${Math.round(ms)} ms`);
    expect(ranked).toHaveLength(40);
    // each day covers 120 consecutive user numbers (mod 400) starting 37 further: in 30 days all 400 users, each on 2+ days
    expect(ranked[0]!.components.window_30d).toMatchObject({
      verified_users: 400,
      returning_users: 400,
      active_users: 400,
      unverified_users: 0,
      events: 30 * 120 * 3,
    });

    const days = { from30: '2026-11-01', from7: '2026-11-24', to: '2026-11-30' };
    const plan = async ([text, params]: [string, unknown[]]) =>
      (await store.sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params))
        .map((row) => row['QUERY PLAN'])
        .join('\n');
    const topApps = `{${ranked
      .slice(0, 3)
      .map((app) => app.appId)
      .join(',')}}`;
    const usersPlan = await plan(named(USERS_QUERY, { ...days, apps: topApps }));
    expect(usersPlan).toMatch(/(Index (Only )?Scan using|Bitmap Index Scan on) daily_users_pkey/);
    expect(usersPlan).not.toMatch(/Seq Scan on daily_users/);
    const verifiedPlan = await plan(named(VERIFIED_QUERY, days));
    expect(verifiedPlan).toMatch(/daily_app_stats_pkey/);
    expect(verifiedPlan).toMatch(/verified_sessions_(app_id_day_user_key_idx|app_id_user_key_idx|pkey)/);
    expect(verifiedPlan).not.toMatch(/Seq Scan on (daily_app_stats|verified_sessions)/);
  });

  it('the schedule computes soon after start, logs, and stops', async () => {
    const { store } = await seeded();
    const log = { info: vi.fn(), error: vi.fn() };
    const stop = startRankingSchedule(store.sql, { everyMs: 60_000, firstRunMs: 10, log });
    try {
      await vi.waitFor(() => expect(log.info).toHaveBeenCalledTimes(1), { timeout: 60_000 });
      expect(log.info.mock.calls[0]![0]).toMatchObject({ apps: expect.any(Number), ranked: expect.any(Number) });
      expect(log.error).not.toHaveBeenCalled();
    } finally {
      stop();
    }
  });
});

describe('ranking schedule', () => {
  function failingSql(calls: { n: number }): SqlRunner {
    const fail = async () => {
      calls.n += 1;
      throw new Error('store unavailable');
    };
    return {
      kind: 'embedded',
      query: fail,
      exec: fail,
      transaction: fail,
      close: async () => {},
    } as unknown as SqlRunner;
  }

  it('logs errors instead of throwing, keeps running every interval, and stops', async () => {
    const calls = { n: 0 };
    const log = { info: vi.fn(), error: vi.fn() };
    const stop = startRankingSchedule(failingSql(calls), { everyMs: 20, firstRunMs: 0, log });
    await vi.waitFor(() => expect(log.error.mock.calls.length).toBeGreaterThanOrEqual(3), { timeout: 60_000 });
    stop();
    const after = calls.n;
    // nothing to wait for: five intervals pass without another run once stopped
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(calls.n).toBe(after);
    expect(log.error.mock.calls[0]![0]).toMatchObject({
      err: expect.objectContaining({ message: 'store unavailable' }),
    });
    expect(log.info).not.toHaveBeenCalled();
  });

  it('uses unref’d timers so it never keeps the process alive', () => {
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const stop = startRankingSchedule(failingSql({ n: 0 }), { log: { info: vi.fn(), error: vi.fn() } });
    const timer = spy.mock.results[0]!.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    stop();
    spy.mockRestore();
  });
});

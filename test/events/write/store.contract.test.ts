// The event plane contract, run against embedded PGlite and a PostgreSQL server: inserts, duplicate
// suppression, rollups that equal the raw rows, activity, rejections, migrations.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { applyMigrations, MIGRATIONS_DIR } from '../../../src/db/migrate.ts';
import type { Store } from '../../../src/db/store.ts';
import { DeletedAppPurger } from '../../../src/events/lifecycle/deleted-app-purge.ts';
import { RollupReader } from '../../../src/events/read/dashboard.ts';
import { Secrets } from '../../../src/tokens/secret.ts';
import { OPERATOR, TokenRegistry } from '../../../src/tokens/registry.ts';
import { EVENT_PLANE_TABLES, SqlEventPlane, type EventRow } from '../../../src/events/write/event-plane.ts';
import { someoneWaitsFor } from '../../helpers/postgres.ts';
import { tempDir } from '../../helpers/service.ts';
import { STORE_BACKEND } from '../../helpers/stores.ts';
import { eventRow } from '../../helpers/events.ts';

const row = (appId: number, overrides: Partial<EventRow> = {}) =>
  eventRow(appId, { receivedAt: new Date('2026-11-20T10:00:00Z'), ...overrides });

describe(`event plane on ${STORE_BACKEND.name}`, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let events: SqlEventPlane;
  let appId: number;

  let apps = 0;

  beforeAll(async () => {
    ({ store, cleanup } = await STORE_BACKEND.open());
    events = new SqlEventPlane(store.sql);
  });
  // each test counts into an app of its own, so none sees another's rows whatever their order
  beforeEach(async () => {
    const appName = `store_app_${++apps}`;
    appId = (await store.prisma.app.create({ data: { appName, bot: '@store_bot', domains: ['a.example'] } })).id;
  });
  afterAll(() => cleanup?.());

  async function one<T>(text: string, params: unknown[] = []): Promise<T> {
    return (await store.sql.query<T>(text, params))[0]!;
  }

  async function rollupsMatchRawRows(app: number) {
    const raw = await one<{ n: number }>('SELECT count(*)::int AS n FROM events WHERE app_id = $1', [app]);
    const counted = await one<{ n: number }>(
      'SELECT coalesce(sum(events), 0)::int AS n FROM daily_event_counts WHERE app_id = $1',
      [app],
    );
    const total = await one<{ n: number }>(
      'SELECT coalesce(max(events_total), 0)::int AS n FROM app_activity WHERE app_id = $1',
      [app],
    );
    const users = await store.sql.query<{ day: string; users: number; distinct_users: number }>(
      `SELECT s.day::text, s.users, (SELECT count(DISTINCT user_key)::int FROM events e WHERE e.app_id = s.app_id AND e.day = s.day) AS distinct_users
       FROM daily_app_stats s WHERE s.app_id = $1`,
      [app],
    );
    const dimensions = await store.sql.query<{ dimension: string; sessions: number; daily_sessions: number }>(
      `SELECT dimension, sum(sessions)::int AS sessions, (SELECT count(*)::int FROM daily_sessions WHERE app_id = $1) AS daily_sessions
       FROM daily_dimensions WHERE app_id = $1 GROUP BY dimension ORDER BY dimension`,
      [app],
    );
    const lastSeenMismatches = await one<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT user_key, max(day) AS last_day FROM events WHERE app_id = $1 GROUP BY 1) e
       FULL JOIN (SELECT user_key, last_day FROM app_users WHERE app_id = $1) u USING (user_key)
       WHERE e.last_day IS DISTINCT FROM u.last_day`,
      [app],
    );
    const sessions = await one<{ raw: number; rows: number; counted: number }>(
      `SELECT (SELECT count(DISTINCT session_id)::int FROM events WHERE app_id = $1 AND sent_by_server IS NOT TRUE) AS raw,
              (SELECT count(*)::int FROM daily_sessions WHERE app_id = $1) AS rows,
              (SELECT coalesce(sum(sessions), 0)::int FROM daily_app_stats WHERE app_id = $1) AS counted`,
      [app],
    );
    expect(counted.n).toBe(raw.n);
    expect(total.n).toBe(raw.n);
    // each session counted once, whatever the days it spans
    expect(sessions).toEqual({ raw: sessions.raw, rows: sessions.raw, counted: sessions.raw });
    expect(lastSeenMismatches.n).toBe(0);
    // the launch dimensions count each session under the values it started with
    const dimensionMismatches = await one<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT day, dimension, value, sessions::int FROM daily_dimensions WHERE app_id = $1) d
       FULL JOIN (SELECT day, x.dimension, x.value, count(*)::int AS sessions FROM daily_sessions s
                  CROSS JOIN LATERAL (VALUES ('platform', s.platform), ('locale', s.locale), ('start_param', s.start_param)) AS x(dimension, value)
                  WHERE app_id = $1 GROUP BY 1, 2, 3) s USING (day, dimension, value)
       WHERE d.sessions IS DISTINCT FROM s.sessions`,
      [app],
    );
    expect(dimensionMismatches.n).toBe(0);
    // every new session is counted once under each launch dimension
    for (const dimension of dimensions) expect(dimension.sessions, dimension.dimension).toBe(dimension.daily_sessions);
    if (raw.n > 0)
      expect(dimensions.map((dimension) => dimension.dimension)).toEqual(['locale', 'platform', 'start_param']);
    for (const day of users) expect(day.users, day.day).toBe(day.distinct_users);
    return raw.n;
  }

  it('inserts rows and counts them into per-day, per-name rollups, distinct users and sessions', async () => {
    const user = crypto.randomBytes(16);
    const session = crypto.randomUUID();
    const rows = [
      row(appId, { userKey: user, sessionId: session }),
      row(appId, { userKey: user, sessionId: session, eventName: 'app-hide' }),
      row(appId, { userKey: user, sessionId: session, eventName: 'app-hide' }),
      row(appId, {
        day: '2026-11-21',
        receivedAt: new Date('2026-11-21T01:00:00Z'),
        occurredAt: new Date('2026-11-21T01:00:00Z'),
        userKey: user,
      }),
    ];
    expect(await events.insert(rows)).toBe(4);
    const counts = await store.sql.query<{ day: string; event_name: string; events: number }>(
      'SELECT day::text, event_name, events::int FROM daily_event_counts WHERE app_id = $1 ORDER BY 1, 2',
      [appId],
    );
    expect(counts).toEqual([
      { day: '2026-11-20', event_name: 'app-hide', events: 2 },
      { day: '2026-11-20', event_name: 'app-init', events: 1 },
      { day: '2026-11-21', event_name: 'app-init', events: 1 },
    ]);
    const stats = await store.sql.query<{ day: string; users: number; sessions: number }>(
      'SELECT day::text, users, sessions FROM daily_app_stats WHERE app_id = $1 ORDER BY 1',
      [appId],
    );
    expect(stats).toEqual([
      { day: '2026-11-20', users: 1, sessions: 1 },
      { day: '2026-11-21', users: 1, sessions: 1 },
    ]);
    const platforms = await store.sql.query<{ day: string; value: string; sessions: number }>(
      `SELECT day::text, value, sessions::int FROM daily_dimensions WHERE app_id = $1 AND dimension = 'platform' ORDER BY 1`,
      [appId],
    );
    expect(platforms).toEqual([
      { day: '2026-11-20', value: 'ios', sessions: 1 },
      { day: '2026-11-21', value: 'ios', sessions: 1 },
    ]);
    // several apps in one read: an app without events has none
    const activities = await events.activities([appId, appId + 1_000_000]);
    expect(activities.get(appId)).toEqual({ lastEventAt: new Date('2026-11-21T01:00:00Z'), eventsTotal: 4 });
    expect(activities.get(appId + 1_000_000)).toEqual({ lastEventAt: null, eventsTotal: 0 });
    await rollupsMatchRawRows(appId);
  });

  it('stores every field of a row as given: key bytes, millisecond times, flags, absent values, nested props', async () => {
    const given = [
      row(appId, {
        receivedAt: new Date('2026-11-21T23:59:59.999Z'),
        occurredAt: new Date('2026-11-21T22:00:00.001Z'),
        day: '2026-11-21',
        eventName: 'transaction-signed',
        isPremium: true,
        isSuccess: true,
        platform: 'android',
        locale: 'pt-br',
        startParam: 'ref_42',
        props: {
          custom_data: { nested: [1, 'two', { three: null }], text: 'ünï "quoted" \\ \u{1F600}' },
          auth_type: 1,
        },
      }),
      row(appId, { occurredAt: new Date(-1), day: '1969-12-31', platform: null, locale: null, startParam: null }),
    ];
    expect(await events.insert(given)).toBe(2);
    const stored = await store.sql.query<Record<string, unknown>>(
      `SELECT encode(event_key, 'hex') AS event_key, received_at, occurred_at, day::text, event_name, session_id::text,
              encode(user_key, 'hex') AS user_key, is_premium, is_success, platform, locale, start_param, props
       FROM events WHERE app_id = $1 AND encode(event_key, 'hex') = ANY($2::text[])`,
      [appId, given.map((r) => r.eventKey.toString('hex'))],
    );
    const expected = given.map((r) => ({
      event_key: r.eventKey.toString('hex'),
      received_at: r.receivedAt,
      occurred_at: r.occurredAt,
      day: r.day,
      event_name: r.eventName,
      session_id: r.sessionId,
      user_key: r.userKey.toString('hex'),
      is_premium: r.isPremium,
      is_success: r.isSuccess,
      platform: r.platform,
      locale: r.locale,
      start_param: r.startParam,
      props: r.props,
    }));
    const byKey = (a: Record<string, unknown>, b: Record<string, unknown>) =>
      String(a.event_key).localeCompare(String(b.event_key));
    expect(stored.sort(byKey)).toEqual(expected.sort(byKey));
  });

  it('stores a retried batch once and counts it once, also inside one batch', async () => {
    const before = await rollupsMatchRawRows(appId);
    const batch = [row(appId), row(appId, { eventName: 'custom-event' })];
    expect(await events.insert(batch)).toBe(2);
    expect(await events.insert(batch)).toBe(0);
    expect(await events.insert([batch[0]!, batch[0]!, row(appId)])).toBe(1);
    expect(await rollupsMatchRawRows(appId)).toBe(before + 3);
  });

  it('keeps rollups exact under concurrent overlapping commits', async () => {
    const before = await rollupsMatchRawRows(appId);
    const shared = Array.from({ length: 50 }, () => row(appId, { userKey: crypto.randomBytes(16) }));
    const users = Array.from({ length: 5 }, () => crypto.randomBytes(16));
    const batches = Array.from({ length: 8 }, (_, i) => [
      ...shared.slice(i * 5, i * 5 + 20),
      ...Array.from({ length: 30 }, () => row(appId, { userKey: users[i % users.length]! })),
    ]);
    await Promise.all(batches.map((batch) => events.insert(batch)));
    expect(await rollupsMatchRawRows(appId)).toBe(before + 50 + 8 * 30);
  });

  it('stores nothing for an app that does not exist (any more)', async () => {
    const gone = (
      await store.prisma.app.create({ data: { appName: 'gone_app', bot: '@gone_bot', domains: ['g.example'] } })
    ).id;
    await store.prisma.app.delete({ where: { id: gone } });
    expect(await events.insert([row(gone), row(gone, { eventName: 'app-hide' }), row(appId)])).toBe(1);
    for (const table of EVENT_PLANE_TABLES) {
      expect(
        (await one<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE app_id = $1`, [gone])).n,
        table,
      ).toBe(0);
    }
    await rollupsMatchRawRows(appId);
  });

  async function rowsOf(app: number): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of EVENT_PLANE_TABLES) {
      counts[table] = (await one<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE app_id = $1`, [app])).n;
    }
    return counts;
  }
  const nothing = Object.fromEntries(EVENT_PLANE_TABLES.map((table) => [table, 0]));

  it("purges a deleted app's events and rollups in chunks, finishes a purge cut short, and leaves live apps alone", async () => {
    const [doomed, kept] = await Promise.all(
      ['purged_app', 'kept_app'].map(
        async (appName) =>
          (await store.prisma.app.create({ data: { appName, bot: '@p_bot', domains: ['p.example'] } })).id,
      ),
    );
    const users = Array.from({ length: 12 }, () => crypto.randomBytes(16));
    for (const app of [doomed, kept]) {
      await events.insert(
        users.flatMap((userKey, i) => [
          // a launch Telegram signed: verified sessions and launch checks have tables of their own
          row(app, { userKey, launchCheck: 'verified', launchDay: '2026-11-20', launchProof: crypto.randomBytes(16) }),
          row(app, { userKey, eventName: i % 2 ? 'app-hide' : 'connection-started', startParam: `p${i % 3}` }),
          // wallet users and custom events have tables of their own
          ...(i % 4 === 0
            ? [row(app, { userKey, eventName: 'custom-event', props: { custom_data: { name: 'buy', sku: 'x' } } })]
            : []),
          ...(i % 4 === 1 ? [row(app, { userKey, eventName: 'connection-completed' })] : []),
        ]),
      );
    }
    const keptBefore = await rowsOf(kept);
    // a purge that stopped after a few chunks of events: rows remain in every table
    await store.prisma.app.delete({ where: { id: doomed } });
    await store.sql.query(
      `DELETE FROM events WHERE ctid = ANY(ARRAY(SELECT ctid FROM events WHERE app_id = $1 LIMIT 5))`,
      [doomed],
    );
    expect(Object.values(await rowsOf(doomed)).every((n) => n > 0)).toBe(true);

    const statements: string[] = [];
    const counting = {
      ...store.sql,
      query: ((text: string, params?: unknown[]) => (
        statements.push(text), store.sql.query(text, params)
      )) as Store['sql']['query'],
    };
    await new DeletedAppPurger(
      counting,
      (error) => {
        throw error;
      },
      7,
    ).purgeDeletedApps();
    expect(await rowsOf(doomed)).toEqual(nothing);
    // 25 events left, 7 rows a statement: several DELETEs of events alone
    expect(statements.filter((text) => text.includes('DELETE FROM events')).length).toBe(4);
    expect(await rowsOf(kept)).toEqual(keptBefore);
    await rollupsMatchRawRows(kept);
  });

  // the race needs two connections: only a PostgreSQL server has them
  if (STORE_BACKEND.kind === 'server')
    it('deletes an app whose events are being committed: the deletion waits, then leaves no rows', async () => {
      const doomed = (
        await store.prisma.app.create({ data: { appName: 'racing_app', bot: '@racing_bot', domains: ['r.example'] } })
      ).id;
      const registry = new TokenRegistry(store.prisma, new Secrets(Buffer.from('store-contract-secret')));
      let deletion: Promise<void> | undefined;
      let deleted = false;
      await store.sql.transaction(async (tx) => {
        const inFlight = new SqlEventPlane({ ...store.sql, query: tx.query });
        expect(await inFlight.insert([row(doomed), row(doomed, { eventName: 'app-hide' })])).toBe(2);
        deletion = registry.deleteApp('racing_app', OPERATOR).then(() => {
          deleted = true;
        });
        await expect
          .poll(() => someoneWaitsFor(store.sql, tx), {
            timeout: 60_000,
            message: "the deletion waits for the lock of the commit's app row",
          })
          .toBe(true);
        // asked before COMMIT is sent: after it, PostgreSQL frees the lock before the committing backend
        // answers, so on a loaded machine the deletion could finish before that answer is read
        expect(deleted).toBe(false);
      });
      await deletion;
      expect(deleted).toBe(true);
      await new DeletedAppPurger(store.sql).purgeDeletedApps();
      for (const table of EVENT_PLANE_TABLES) {
        expect(
          (await one<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE app_id = $1`, [doomed])).n,
          table,
        ).toBe(0);
      }
    });

  it('counts distinct users of a period, also when some were seen again after it', async () => {
    const app = (
      await store.prisma.app.create({ data: { appName: 'users_app', bot: '@users_bot', domains: ['u.example'] } })
    ).id;
    const [alice, bob, carol] = [crypto.randomBytes(16), crypto.randomBytes(16), crypto.randomBytes(16)];
    const on = (day: string, userKey: Buffer) => {
      const at = new Date(`${day}T12:00:00Z`);
      return row(app, { userKey, day, receivedAt: at, occurredAt: at });
    };
    // alice: 1st and 10th, bob: 5th, carol: 10th twice (two commits: last_day is updated, not duplicated)
    await events.insert([on('2026-11-01', alice), on('2026-11-05', bob), on('2026-11-10', carol)]);
    await events.insert([on('2026-11-10', alice), on('2026-11-10', carol)]);
    await rollupsMatchRawRows(app);
    const users = async (from: string, to: string) =>
      (await new RollupReader(store.sql).dashboard(app, { from, to })).totals.users;
    expect(await users('2026-11-01', '2026-11-30')).toBe(3);
    expect(await users('2026-11-06', '2026-11-30')).toBe(2);
    expect(await users('2026-11-11', '2026-11-30')).toBe(0);
    // periods that end before some users' last day: alice on the 1st counts, her 10th does not
    expect(await users('2026-11-01', '2026-11-05')).toBe(2);
    expect(await users('2026-11-02', '2026-11-09')).toBe(1);
    expect(await users('2026-11-06', '2026-11-09')).toBe(0);
  });

  it('counts a session that crosses midnight once, on the day it started, in one commit or across commits', async () => {
    const app = (
      await store.prisma.app.create({ data: { appName: 'midnight_app', bot: '@midnight_bot', domains: ['m.example'] } })
    ).id;
    const at = (iso: string, sessionId: string, platform = 'ios') =>
      row(app, { sessionId, platform, day: iso.slice(0, 10), receivedAt: new Date(iso), occurredAt: new Date(iso) });
    const [late, split] = [crypto.randomUUID(), crypto.randomUUID()];
    // `late` crosses midnight inside one commit; `split` is seen again in a later commit, on a later day
    await events.insert([
      at('2026-11-20T23:59:00Z', late),
      at('2026-11-21T00:01:00Z', late),
      at('2026-11-20T22:00:00Z', split),
    ]);
    await events.insert([at('2026-11-21T00:30:00Z', split, 'android'), at('2026-11-22T00:30:00Z', split)]);
    await rollupsMatchRawRows(app);
    const dashboard = await new RollupReader(store.sql).dashboard(app, { from: '2026-11-20', to: '2026-11-22' });
    expect(dashboard.totals).toEqual({ events: 5, users: 5, verifiedUsers: 0, sessions: 2 });
    expect(dashboard.days.map((day) => [day.day, day.sessions])).toEqual([
      ['2026-11-20', 2],
      ['2026-11-21', 0],
      ['2026-11-22', 0],
    ]);
    // counted under the launch values it started with
    expect(dashboard.dimensions.platform).toEqual([{ value: 'ios', sessions: 2 }]);
  });

  it('counts no Mini App session for what a bot sends with a server key, and its users as users', async () => {
    const app = (
      await store.prisma.app.create({ data: { appName: 'bot_side_app', bot: '@bot_side_bot', domains: ['b.example'] } })
    ).id;
    const fromBot = (eventName: string) =>
      row(app, { eventName, sentByServer: true, platform: 'telegram-bot', sessionId: crypto.randomUUID() });
    const rows = [fromBot('bot-start'), fromBot('bot-command'), row(app, { platform: 'android' })];
    await events.insert(rows);
    await rollupsMatchRawRows(app);
    const { day } = rows[0]!;
    const dashboard = await new RollupReader(store.sql).dashboard(app, { from: day, to: day });
    expect(dashboard.totals).toEqual({ events: 3, users: 3, verifiedUsers: 0, sessions: 1 });
    expect(dashboard.dimensions.platform).toEqual([{ value: 'android', sessions: 1 }]);
  });

  it('keeps the most recent 50 rejections per app, newest first', async () => {
    const base = Date.parse('2026-11-20T00:00:00Z');
    const rejections = Array.from({ length: 60 }, (_, i) => ({
      appId,
      at: new Date(base + i * 1000),
      status: 403,
      message: 'The domain name does not match.',
      origin: `https://site${i}.example`,
      count: 1,
    }));
    await events.addRejections(rejections.slice(0, 30));
    await events.addRejections(rejections.slice(30));
    const recent = await events.recentRejections(appId, 100);
    expect(recent).toHaveLength(50);
    expect(recent[0]!.origin).toBe('https://site59.example');
    expect(recent[49]!.origin).toBe('https://site10.example');
    // the last of each app, several apps in one read: an app without refusals is absent
    const last = await events.lastRejections([appId, appId + 1_000_000]);
    expect([...last.keys()]).toEqual([appId]);
    expect(last.get(appId)).toMatchObject({ appId, origin: 'https://site59.example', status: 403 });
  });

  it('applies migrations once, records them for Prisma, and refuses an edited migration', async () => {
    expect(await applyMigrations(store.sql)).toEqual([]);
    const recorded = await store.sql.query<{ migration_name: string }>(
      'SELECT migration_name FROM "_prisma_migrations"',
    );
    expect(recorded.map((entry) => entry.migration_name)).toEqual(
      fs.readdirSync(MIGRATIONS_DIR).filter((name) => !name.endsWith('.toml')),
    );
    const edited = tempDir('tma-migrations-');
    for (const name of fs.readdirSync(MIGRATIONS_DIR).filter((entry) => !entry.endsWith('.toml'))) {
      fs.mkdirSync(path.join(edited, name));
      fs.writeFileSync(
        path.join(edited, name, 'migration.sql'),
        fs.readFileSync(path.join(MIGRATIONS_DIR, name, 'migration.sql'), 'utf8') + '\n-- edited\n',
      );
    }
    await expect(applyMigrations(store.sql, edited)).rejects.toThrow(/was changed after it was applied/);
  });
});

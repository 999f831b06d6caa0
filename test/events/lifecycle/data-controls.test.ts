// Data controls on both engines: erasing one user (every event and per-user row of theirs goes, another user's and
// the anonymous counts stay, the counts that carry text count the others alone, in chunks, finished when cut short,
// round again when their events land meanwhile, audited under a random reference), and
// the retention purge (days before the period go in chunks, the period and the counts stay, resumes after a stop).
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlRunner } from '../../../src/db/sql.ts';
import type { Store } from '../../../src/db/store.ts';
import { DataControls } from '../../../src/events/lifecycle/data-controls.ts';
import { addDays } from '../../../src/events/days.ts';
import { decodePostings, type PostingEvent } from '../../../src/events/write/funnel-posting-format.ts';
import { Pseudonymiser } from '../../../src/events/request/pseudonym.ts';
import { NO_FILTER } from '../../../src/events/read/filters.ts';
import { InsightsReader } from '../../../src/events/read/insights.ts';
import { firstKeptDay, parseRetention } from '../../../src/events/lifecycle/retention.ts';
import { DeletedAppPurger } from '../../../src/events/lifecycle/deleted-app-purge.ts';
import { RetentionPurger } from '../../../src/events/lifecycle/retention-purge.ts';
import { SqlEventPlane, type EventRow } from '../../../src/events/write/event-plane.ts';
import { eraseUser } from '../../../src/events/lifecycle/user-erasure.ts';
import { Secrets } from '../../../src/tokens/secret.ts';
import { RegistryError, TokenRegistry, type Actor } from '../../../src/tokens/registry.ts';
import { STORE_BACKEND } from '../../helpers/stores.ts';

const DAY_MS = 86_400_000;
const NOW = new Date('2026-11-24T12:00:00Z');
const TODAY = '2026-11-24';

const PER_USER_TABLES = ['daily_users', 'app_users', 'wallet_users', 'verified_sessions'] as const;
const COUNT_TABLES = [
  'daily_event_counts',
  'daily_app_stats',
  'daily_dimensions',
  'daily_custom_events',
  'daily_custom_values',
  'daily_app_usage',
  'app_activity',
  'custom_catalog',
] as const;

/** an event key as the service makes one: the client's time (6 bytes), then 10 other bytes */
function eventKey(ms: number): Buffer {
  const key = crypto.randomBytes(16);
  key.writeUIntBE(ms, 0, 6);
  return key;
}

function row(appId: number, userKey: Buffer, at: Date, overrides: Partial<EventRow> = {}): EventRow {
  return {
    appId,
    eventKey: eventKey(at.getTime()),
    receivedAt: at,
    occurredAt: at,
    day: at.toISOString().slice(0, 10),
    eventName: 'app-init',
    sessionId: crypto.randomUUID(),
    userKey,
    isPremium: false,
    isSuccess: false,
    platform: 'ios',
    locale: 'en',
    startParam: 'ads',
    props: {},
    ...overrides,
  };
}

/**
 * one session of a user on a day: a launch Telegram signed, a custom event, a wallet connected and a transaction
 * signed
 */
function session(appId: number, userKey: Buffer, day: string): EventRow[] {
  const sessionId = crypto.randomUUID();
  const at = (minute: number) => new Date(Date.parse(`${day}T10:00:00Z`) + minute * 60_000);
  return [
    row(appId, userKey, at(0), {
      sessionId,
      launchCheck: 'verified',
      launchDay: day,
      launchProof: crypto.randomBytes(16),
    }),
    row(appId, userKey, at(1), {
      sessionId,
      eventName: 'custom-event',
      props: { custom_data: { name: 'buy', plan: 'pro' } },
    }),
    row(appId, userKey, at(2), { sessionId, eventName: 'connection-started' }),
    row(appId, userKey, at(3), { sessionId, eventName: 'connection-completed' }),
    row(appId, userKey, at(4), { sessionId, eventName: 'transaction-signed' }),
  ];
}

/** a step of an erase's walk over the app's events (the one statement deleting the user's events) */
const isWalkStep = (text: string) => text.includes('DELETE FROM events e USING mine');

/** a SQL runner that tells `seen` of every statement and its first row, after it ran */
function watched(sql: SqlRunner, seen: (text: string, first: Record<string, unknown> | undefined) => unknown) {
  const runner: SqlRunner = {
    kind: sql.kind,
    query: async <Row>(text: string, params?: unknown[]) => {
      const rows = await sql.query<Row>(text, params);
      await seen(text, rows[0] as Record<string, unknown> | undefined);
      return rows;
    },
    exec: (script) => sql.exec(script),
    transaction: (fn) => sql.transaction(fn),
    close: () => sql.close(),
  };
  return runner;
}

describe(`data controls on ${STORE_BACKEND.name}`, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let events: SqlEventPlane;
  let registry: TokenRegistry;
  let pseudonymiser: Pseudonymiser;
  let secrets: Secrets;
  let appCount = 0;

  beforeAll(async () => {
    ({ store, cleanup } = await STORE_BACKEND.open());
    events = new SqlEventPlane(store.sql);
    secrets = new Secrets(Buffer.from('data-controls-test-secret-0123456789'));
    registry = new TokenRegistry(store.prisma, secrets);
    pseudonymiser = new Pseudonymiser(secrets);
  });
  afterAll(() => cleanup?.());

  const owner: Actor = { surface: 'site', telegramId: '4242' };
  const stranger: Actor = { surface: 'site', telegramId: '5353' };

  async function newApp(): Promise<{ appId: number; appName: string }> {
    const appName = `controls_app_${++appCount}`;
    const { app } = await registry.createApp(
      { appName, bot: '@controls_bot', domains: ['c.example'], ownerTelegramId: owner.telegramId },
      owner,
    );
    return { appId: app.appId, appName };
  }

  async function count(text: string, params: unknown[]): Promise<number> {
    return (await store.sql.query<{ n: number }>(text, params))[0]!.n;
  }

  /** the user's events in the app's funnel postings */
  async function postingsOfUser(appId: number, userKey: Buffer): Promise<number> {
    const rows = await store.sql.query<{ day: string; entries: Uint8Array }>(
      `SELECT day::text AS day, entries FROM funnel_postings WHERE app_id = $1`,
      [appId],
    );
    const events: PostingEvent[] = [];
    for (const { day, entries: bytes } of rows)
      decodePostings(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), day, {}, 'user', (at, person) =>
        events.push({ at, person, bytes: Buffer.alloc(0), entryAt: 0 }),
      );
    return events.filter((event) => event.person === userKey.toString('latin1')).length;
  }

  /** rows of the user in each per-user table and the events table, and their events in the funnel postings */
  async function rowsOfUser(appId: number, userKey: Buffer): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const table of ['events', ...PER_USER_TABLES])
      counts[table] = await count(
        `SELECT count(*)::int AS n FROM ${table} WHERE app_id = $1 AND user_key = decode($2, 'base64')`,
        [appId, userKey.toString('base64')],
      );
    counts.funnel_postings = await postingsOfUser(appId, userKey);
    return counts;
  }

  /** the per-session rows of the sessions the user's events name (before they are erased) */
  async function sessionsOf(appId: number, userKey: Buffer): Promise<string[]> {
    const rows = await store.sql.query<{ session_id: string }>(
      `SELECT DISTINCT session_id::text FROM events WHERE app_id = $1 AND user_key = decode($2, 'base64') ORDER BY 1`,
      [appId, userKey.toString('base64')],
    );
    return rows.map((entry) => entry.session_id);
  }

  async function sessionRows(appId: number, sessions: string[]): Promise<{ sessions: number }> {
    const params = [appId, `{${sessions.join(',')}}`];
    return {
      sessions: await count(
        `SELECT count(*)::int AS n FROM daily_sessions WHERE app_id = $1 AND session_id = ANY($2::uuid[])`,
        params,
      ),
    };
  }

  /** every row of the count tables, as text */
  async function countRows(appId: number): Promise<Record<string, string[]>> {
    const dump: Record<string, string[]> = {};
    for (const table of COUNT_TABLES) {
      const rows = await store.sql.query<{ row: string }>(
        `SELECT row_to_json(t)::text AS row FROM ${table} t WHERE app_id = $1 ORDER BY 1`,
        [appId],
      );
      dump[table] = rows.map((entry) => entry.row);
    }
    return dump;
  }

  describe('erasing a user', () => {
    const days = ['2026-11-20', '2026-11-21', '2026-11-22'];

    it('refuses a stranger, and deletes nothing', async () => {
      const { appId, appName } = await newApp();
      const alice = pseudonymiser.userKey(appId, '1001');
      await events.insert(days.flatMap((day) => session(appId, alice, day)));
      const aliceBefore = await rowsOfUser(appId, alice);
      const controls = new DataControls(store.prisma, store.sql, registry, pseudonymiser);
      await expect(controls.eraseUser(appName, '1001', stranger)).rejects.toThrow(RegistryError);
      expect(await rowsOfUser(appId, alice)).toEqual(aliceBefore);
    });

    describe('of two, by the owner, 4 rows a step', () => {
      // one erase for these tests, which only read what it answered and what it left of its own app
      let appId: number;
      let appName: string;
      let alice: Buffer;
      let bob: Buffer;
      let aliceBefore: Record<string, number>;
      let bobBefore: Record<string, number>;
      let aliceSessions: string[];
      let bobSessions: string[];
      let counts: Record<string, string[]>;
      const statements: string[] = [];
      let result: Awaited<ReturnType<DataControls['eraseUser']>>;
      beforeAll(async () => {
        ({ appId, appName } = await newApp());
        [alice, bob] = ['1001', '2002'].map((id) => pseudonymiser.userKey(appId, id)) as [Buffer, Buffer];
        await events.insert(days.flatMap((day) => [...session(appId, alice, day), ...session(appId, bob, day)]));
        aliceBefore = await rowsOfUser(appId, alice);
        bobBefore = await rowsOfUser(appId, bob);
        [aliceSessions, bobSessions] = [await sessionsOf(appId, alice), await sessionsOf(appId, bob)];
        counts = await countRows(appId);
        const controls = new DataControls(
          store.prisma,
          watched(store.sql, (text) => statements.push(text)),
          registry,
          pseudonymiser,
          { chunkRows: 4 },
        );
        result = await controls.eraseUser(appName, '1001', owner);
      });

      it('deletes every event, session and per-user row of the user', async () => {
        expect(
          Object.values(aliceBefore).every((n) => n > 0),
          JSON.stringify(aliceBefore),
        ).toBe(true);
        expect(result.complete).toBe(true);
        expect(result.deleted).toEqual({
          events: 15,
          daily_sessions: 3,
          daily_users: 3,
          app_users: 1,
          wallet_users: 1,
          verified_sessions: 3,
          funnel_postings: 15,
        });
        expect(await rowsOfUser(appId, alice)).toEqual(Object.fromEntries(Object.keys(aliceBefore).map((t) => [t, 0])));
        expect(await sessionRows(appId, aliceSessions)).toEqual({ sessions: 0 });
      });

      it("keeps the other user's events, sessions and per-user rows", async () => {
        expect(await rowsOfUser(appId, bob)).toEqual(bobBefore);
        expect(await sessionRows(appId, bobSessions)).toEqual({ sessions: 3 });
      });

      it('keeps the anonymous counts, and counts the other user alone where a count carries text', async () => {
        // events, users and sessions per day keep counting the erased user, as anonymous numbers; the counts that
        // carry text (sessions per launch attribute, custom events per name and value) count the other user alone,
        // whose texts they all are too (the catalog keeps them)
        const after = await countRows(appId);
        const halved = ['daily_dimensions', 'daily_custom_events', 'daily_custom_values'] as const;
        const unchanged = (dump: Record<string, string[]>) =>
          Object.fromEntries(Object.entries(dump).filter(([table]) => !(halved as readonly string[]).includes(table)));
        expect(unchanged(after)).toEqual(unchanged(counts));
        const counted = (table: string, column: string, n: number) =>
          counts[table]!.map((row) => {
            const parsed = JSON.parse(row) as Record<string, unknown>;
            expect(parsed[column]).toBe(2);
            return JSON.stringify({ ...parsed, [column]: n });
          });
        expect(after.daily_dimensions).toEqual(counted('daily_dimensions', 'sessions', 1));
        expect(after.daily_custom_events).toEqual(counted('daily_custom_events', 'events', 1));
        expect(after.daily_custom_values).toEqual(counted('daily_custom_values', 'events', 1));
      });

      it('walks the events in chunks', () => {
        // 30 events read 4 at a time
        expect(statements.filter((text) => isWalkStep(text)).length).toBe(8);
      });

      it('audits it under a random reference, without the id', async () => {
        const audit = await store.prisma.auditLog.findMany({ where: { appName, action: 'user.erase' } });
        expect(audit).toHaveLength(1);
        expect(audit[0]).toMatchObject({ surface: 'site', appId, actorKey: registry.ownerKey('4242') });
        expect(audit[0]!.detail).toEqual({
          user: result.reference,
          deleted: result.deleted,
          complete: true,
          admin: false,
        });
        expect(result.reference).toMatch(/^[A-Za-z0-9_-]{12}$/);
        expect(JSON.stringify(audit.map(({ id: _id, ...entry }) => entry))).not.toContain('1001');
      });
    });

    it('run again, deletes nothing and records a reference of its own, which no keyed hash of the id leads to', async () => {
      const { appId, appName } = await newApp();
      const alice = pseudonymiser.userKey(appId, '1001');
      await events.insert(days.flatMap((day) => session(appId, alice, day)));
      const controls = new DataControls(store.prisma, store.sql, registry, pseudonymiser, { chunkRows: 4 });
      const result = await controls.eraseUser(appName, '1001', owner);
      // A reference is random, recorded once: with the secret, no keyed hash of the id or of the user's key leads to
      // it, as the keyed reference did (the id space is small)
      const again = await controls.eraseUser(appName, '1001', owner);
      expect(again.reference).toMatch(/^[A-Za-z0-9_-]{12}$/);
      expect(again.reference).not.toBe(result.reference);
      expect(Object.values(again.deleted).every((n) => n === 0)).toBe(true);
      const keyed = [alice.toString('base64url'), '1001'].map((text) =>
        secrets.shortHash('erased-user', text).slice(0, 12),
      );
      for (const reference of [result.reference, again.reference]) expect(keyed).not.toContain(reference);
      const references = await store.prisma.auditLog.findMany({
        where: { appName, action: 'user.erase' },
        orderBy: { id: 'asc' },
      });
      expect(references.map((entry) => (entry.detail as { user: string }).user)).toEqual([
        result.reference,
        again.reference,
      ]);
    });

    it("no longer lists the user's own property values: their events leave the counts, other users' values stay", async () => {
      const { appId, appName } = await newApp();
      const [alice, bob] = ['1001', '2002'].map((id) => pseudonymiser.userKey(appId, id)) as [Buffer, Buffer];
      const profile = (userKey: Buffer, id: string, day: string) =>
        row(appId, userKey, new Date(`${day}T11:00:00Z`), {
          eventName: 'custom-event',
          props: { custom_data: { name: 'profile', telegram_id: id, plan: 'pro' } },
        });
      await events.insert(days.flatMap((day) => [profile(alice, '1001', day), profile(bob, '2002', day)]));
      const insights = new InsightsReader(store.sql);
      const period = { from: days[0]!, to: days.at(-1)! };
      const valuesOf = async (property: string, filter = NO_FILTER) =>
        (await insights.customPropertyValues(appId, period, 'profile', property, filter)).values;
      expect(await valuesOf('telegram_id')).toEqual([
        { value: '1001', count: 3 },
        { value: '2002', count: 3 },
      ]);

      await new DataControls(store.prisma, store.sql, registry, pseudonymiser).eraseUser(appName, '1001', owner);
      // the property counts the other user's events alone, without the erased user's value: from the rollups and
      // from the events alike; a value both sent stays, counted without them
      expect(await valuesOf('telegram_id')).toEqual([{ value: '2002', count: 3 }]);
      expect(await valuesOf('telegram_id', { platform: 'ios' })).toEqual([{ value: '2002', count: 3 }]);
      expect(await valuesOf('plan')).toEqual([{ value: 'pro', count: 3 }]);
      // nor does the catalog keep it: its place is free for another value
      const catalog = await store.sql.query<{ value: string }>(
        `SELECT value FROM custom_catalog WHERE app_id = $1 AND level = 2 ORDER BY value`,
        [appId],
      );
      expect(catalog.map((entry) => entry.value)).toEqual(['2002', 'pro']);
      const rows = await store.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM daily_custom_values WHERE app_id = $1 AND value = '1001'`,
        [appId],
      );
      expect(rows[0]!.n).toBe(0);
    });

    it('finishes an erase cut short when run again', async () => {
      const { appId } = await newApp();
      const alice = pseudonymiser.userKey(appId, '1001');
      await events.insert(days.flatMap((day) => session(appId, alice, day)));
      let walked = 0;
      const failing = watched(store.sql, (text) => {
        if (isWalkStep(text) && ++walked === 2) throw new Error('connection lost');
      });
      await expect(eraseUser(failing, appId, alice, { chunkRows: 4 })).rejects.toThrow('connection lost');
      expect((await rowsOfUser(appId, alice)).events).toBeGreaterThan(0);

      const finished = await eraseUser(store.sql, appId, alice, { chunkRows: 4 });
      expect(finished.complete).toBe(true);
      expect(Object.values(await rowsOfUser(appId, alice)).every((n) => n === 0)).toBe(true);
      expect(await count(`SELECT count(*)::int AS n FROM daily_sessions WHERE app_id = $1`, [appId])).toBe(0);
    });

    it('takes a start_param only they sent off every day, those the retention purge emptied too, and keeps one another user was first seen with', async () => {
      const { appId } = await newApp();
      const [alice, bob] = ['1001', '2002'].map((id) => pseudonymiser.userKey(appId, id)) as [Buffer, Buffer];
      const [old, kept] = ['2026-10-10', '2026-11-20'];
      const at = (day: string, hour: number) => new Date(`${day}T${String(hour).padStart(2, '0')}:00:00Z`);
      await events.insert([
        row(appId, alice, at(old, 10), { startParam: 'ref1001' }),
        row(appId, alice, at(kept, 10), { startParam: 'ref1001' }),
        // Bob is first seen with "spring" on a day the purge deletes; he stays active, and so does his first arrival
        row(appId, bob, at(old, 11), { startParam: 'spring' }),
        row(appId, bob, at(kept, 11), { startParam: 'ads' }),
        row(appId, alice, at(kept, 12), { startParam: 'spring' }),
      ]);
      await store.sql.query(`UPDATE apps SET retention_days = 30 WHERE id = $1`, [appId]);
      expect((await new RetentionPurger(store.sql, undefined, { now: () => NOW }).purgeExpired()).events).toBe(2);
      // forever again: the retention suite below purges every app that keeps less
      await store.sql.query(`UPDATE apps SET retention_days = NULL WHERE id = $1`, [appId]);
      const startParams = () =>
        store.sql.query<{ day: string; value: string; sessions: number }>(
          `SELECT day::text, value, sessions::int FROM daily_dimensions
           WHERE app_id = $1 AND dimension = 'start_param' ORDER BY day, value`,
          [appId],
        );
      expect(await startParams()).toEqual([
        { day: old, value: 'ref1001', sessions: 1 },
        { day: old, value: 'spring', sessions: 1 },
        { day: kept, value: 'ads', sessions: 1 },
        { day: kept, value: 'ref1001', sessions: 1 },
        { day: kept, value: 'spring', sessions: 1 },
      ]);

      expect((await eraseUser(store.sql, appId, alice)).complete).toBe(true);
      // "ref1001" leaves the day whose session the purge had deleted too (the erase could not take that session out
      // of the count); "spring" stays where Bob's session counts it, Alice's session taken out
      expect(await startParams()).toEqual([
        { day: old, value: 'spring', sessions: 1 },
        { day: kept, value: 'ads', sessions: 1 },
      ]);
    });

    it('runs a step again that the server rolled back to break a deadlock with a commit', async () => {
      const { appId } = await newApp();
      const alice = pseudonymiser.userKey(appId, '1001');
      await events.insert(days.flatMap((day) => session(appId, alice, day)));
      // the first step is rolled back twice before it runs
      let refused = 0;
      const deadlocking: SqlRunner = {
        kind: store.sql.kind,
        query: async <Row>(text: string, params?: unknown[]) => {
          if (isWalkStep(text) && refused < 2) {
            refused++;
            throw Object.assign(new Error('deadlock detected'), { code: '40P01' });
          }
          return store.sql.query<Row>(text, params);
        },
        exec: (script) => store.sql.exec(script),
        transaction: (fn) => store.sql.transaction(fn),
        close: () => store.sql.close(),
      };
      const erased = await eraseUser(deadlocking, appId, alice, { chunkRows: 4 });
      expect(refused).toBe(2);
      expect(erased).toMatchObject({ complete: true, deleted: { events: 15, daily_sessions: 3 } });
      expect(Object.values(await rowsOfUser(appId, alice)).every((n) => n === 0)).toBe(true);
    });

    it("goes round again when the user's events are stored behind its walk, and says so when they keep coming", async () => {
      const { appId } = await newApp();
      const [alice, bob] = ['1001', '2002'].map((id) => pseudonymiser.userKey(appId, id)) as [Buffer, Buffer];
      await events.insert(days.flatMap((day) => [...session(appId, alice, day), ...session(appId, bob, day)]));
      // a commit of the user's events while the walk is past their keys (a day earlier than any stored)
      let walked = 0;
      const racing = watched(store.sql, async (text) => {
        if (isWalkStep(text) && ++walked === 5) await events.insert(session(appId, alice, '2026-11-19'));
      });
      const erased = await eraseUser(racing, appId, alice, { chunkRows: 4 });
      expect(erased.complete).toBe(true);
      expect(erased.deleted.events).toBe(20);
      expect(Object.values(await rowsOfUser(appId, alice)).every((n) => n === 0)).toBe(true);

      // a user whose events land in every round: the erase ends, and tells
      await events.insert(session(appId, alice, '2026-11-23'));
      let day = 0;
      const busy = watched(store.sql, async (text) => {
        if (isWalkStep(text)) await events.insert(session(appId, alice, addDays('2026-10-01', day++)));
      });
      const unfinished = await eraseUser(busy, appId, alice, { chunkRows: 100, maxRounds: 2 });
      expect(unfinished.complete).toBe(false);
      const rest = await eraseUser(store.sql, appId, alice);
      expect(rest.complete).toBe(true);
      expect(Object.values(await rowsOfUser(appId, alice)).every((n) => n === 0)).toBe(true);
      expect((await rowsOfUser(appId, bob)).events).toBe(15);
    });
  });

  describe('retention', () => {
    it('is set by the owner or an administrator to one of the choices, audited', async () => {
      const { appName } = await newApp();
      const controls = new DataControls(store.prisma, store.sql, registry, pseudonymiser);
      expect((await controls.retention(appName, owner)).days).toBeNull();
      await expect(controls.setRetention(appName, 90, stranger)).rejects.toThrow(RegistryError);
      expect((await controls.setRetention(appName, 90, owner)).days).toBe(90);
      expect((await controls.setRetention(appName, 90, owner)).days).toBe(90); // unchanged: not audited again
      expect((await controls.setRetention(appName, null, { surface: 'cli', isAdmin: true })).days).toBeNull();
      const audit = await store.prisma.auditLog.findMany({
        where: { appName, action: 'app.retention' },
        orderBy: { id: 'asc' },
      });
      expect(audit.map((entry) => [entry.surface, entry.detail])).toEqual([
        ['site', { days: 90, previous: null, admin: false }],
        ['cli', { days: null, previous: 90, admin: true }],
      ]);
      expect(parseRetention('forever')).toEqual({ ok: true, value: null });
      expect(parseRetention('180')).toEqual({ ok: true, value: 180 });
      expect(parseRetention(365)).toEqual({ ok: true, value: 365 });
      for (const bad of [0, 7, 31, '90d', '', 'never', -30, 90.5, {}, []])
        expect(parseRetention(bad), JSON.stringify(bad)).toEqual({
          ok: false,
          error: 'Retention must be 30, 90, 180, 365 days or "forever".',
        });
    });

    it('purges events and per-user rows of days before the period in chunks, keeps the period, the counts and other apps, and resumes after a stop', async () => {
      const { appId, appName } = await newApp();
      const { appId: otherApp } = await newApp();
      const firstKept = firstKeptDay(30, NOW);
      expect(firstKept).toBe('2026-10-26');
      const [gone, back, wallet] = ['1', '2', '3'].map((id) => pseudonymiser.userKey(appId, id)) as [
        Buffer,
        Buffer,
        Buffer,
      ];
      const old = ['2026-10-10', '2026-10-20', '2026-10-25'];
      const kept = ['2026-10-26', '2026-11-23'];
      const late = new Date(`2026-10-20T08:00:00Z`);
      await events.insert([
        ...old.flatMap((day) => session(appId, gone, day)),
        ...[...old, ...kept].flatMap((day) => session(appId, back, day)),
        ...[old[0]!, kept[1]!].flatMap((day) => session(appId, wallet, day)),
        // an old event stored late (sent offline, received within the period): its key has its old time
        row(appId, back, late, { receivedAt: new Date(`${TODAY}T08:00:00Z`) }),
        // an old event whose client's clock ran ahead: counted on its day of receipt, its key far later
        { ...row(appId, back, late), eventKey: eventKey(Date.parse('2027-01-01T00:00:00Z')) },
        ...[...old, ...kept].flatMap((day) => session(otherApp, gone, day)),
      ]);
      const countsBefore = await countRows(appId);
      const otherBefore = await countRows(otherApp);
      const oldPostings = `SELECT count(*)::int AS n FROM funnel_postings WHERE app_id = $1 AND day < $2`;
      const postingsBefore = await count(oldPostings, [appId, firstKept]);
      expect(postingsBefore).toBeGreaterThan(0);
      const otherEvents = await count(`SELECT count(*)::int AS n FROM events WHERE app_id = $1`, [otherApp]);
      const keptEvents = await count(`SELECT count(*)::int AS n FROM events WHERE app_id = $1 AND day >= $2`, [
        appId,
        firstKept,
      ]);
      expect(keptEvents).toBe(15);
      await new DataControls(store.prisma, store.sql, registry, pseudonymiser).setRetention(appName, 30, owner);

      // stopped after a few statements: the next purger finishes the job
      const deletions: number[] = [];
      let stopping: Promise<void> | undefined;
      const stopped: RetentionPurger = new RetentionPurger(
        watched(store.sql, (text, first) => {
          if (!text.includes('WITH gone AS')) return;
          deletions.push(first!.n as number);
          if (deletions.length === 3) stopping = stopped.stop();
        }),
        (error) => {
          throw error;
        },
        { chunkRows: 5, now: () => NOW },
      );
      await stopped.purgeExpired();
      await stopping;
      expect(deletions).toEqual([5, 5, 5]);
      expect(
        await count(`SELECT count(*)::int AS n FROM events WHERE app_id = $1 AND day < $2`, [appId, firstKept]),
      ).toBe(22);

      const purger = new RetentionPurger(
        watched(store.sql, (text, first) => {
          if (text.includes('WITH gone AS')) deletions.push(first!.n as number);
        }),
        (error) => {
          throw error;
        },
        { chunkRows: 5, now: () => NOW },
      );
      const purged = await purger.purgeExpired();
      expect(purged).toEqual({
        events: 22,
        daily_sessions: 9,
        daily_users: 7,
        app_users: 1,
        wallet_users: 1,
        verified_sessions: 7,
        funnel_postings: postingsBefore,
      });
      expect(await count(oldPostings, [appId, firstKept])).toBe(0);
      // never more than a chunk a statement
      expect(Math.max(...deletions)).toBe(5);

      expect(await count(`SELECT count(*)::int AS n FROM events WHERE app_id = $1`, [appId])).toBe(keptEvents);
      for (const table of ['events', 'daily_users', 'daily_sessions'])
        expect(
          await count(`SELECT count(*)::int AS n FROM ${table} WHERE app_id = $1 AND day < $2`, [appId, firstKept]),
          table,
        ).toBe(0);
      expect(await rowsOfUser(appId, gone)).toEqual({
        events: 0,
        daily_users: 0,
        app_users: 0,
        wallet_users: 0,
        verified_sessions: 0,
        funnel_postings: 0,
      });
      // a user seen within the period keeps their own rows (first day included), and their days within it
      expect(await rowsOfUser(appId, back)).toEqual({
        events: 10,
        daily_users: 2,
        app_users: 1,
        wallet_users: 1,
        verified_sessions: 2,
        funnel_postings: 10,
      });
      expect(
        await store.sql.query(
          `SELECT first_day::text, last_day::text FROM app_users WHERE app_id = $1 AND user_key = decode($2, 'base64')`,
          [appId, wallet.toString('base64')],
        ),
      ).toEqual([{ first_day: old[0], last_day: kept[1] }]);
      expect(await countRows(appId)).toEqual(countsBefore);
      expect(await countRows(otherApp)).toEqual(otherBefore);
      expect(await count(`SELECT count(*)::int AS n FROM events WHERE app_id = $1`, [otherApp])).toBe(otherEvents);

      // nothing more to do until a day passes
      expect(Object.values(await purger.purgeExpired()).every((n) => n === 0)).toBe(true);
      const tomorrow = new RetentionPurger(store.sql, undefined, { now: () => new Date(NOW.getTime() + DAY_MS) });
      expect((await tomorrow.purgeExpired()).events).toBe(5);
      await Promise.all([purger.stop(), tomorrow.stop()]);
    });
  });
});

// the embedded store's own VACUUM after a purge: PGlite runs no autovacuum, a PostgreSQL server does
describe.runIf(STORE_BACKEND.kind === 'embedded')(`disk space on ${STORE_BACKEND.name}`, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ store, cleanup } = await STORE_BACKEND.open()));
  afterAll(() => cleanup?.());

  const eventsBytes = async () =>
    (await store.sql.query<{ n: number }>(`SELECT pg_relation_size('events')::int AS n`))[0]!.n;

  /** 3,000 events of an app on a day, each a launch of its own user */
  const launches = (appId: number, day: string) =>
    Array.from({ length: 3_000 }, (_, i) =>
      row(appId, Buffer.from(`user-${i}`), new Date(Date.parse(`${day}T10:00:00Z`) + i * 1_000)),
    );

  it('reuses what a retention purge and a deleted app purge free for the events stored after them', async () => {
    const events = new SqlEventPlane(store.sql);
    const [{ id: kept }, { id: deleted }] = await Promise.all(
      ['space_kept', 'space_deleted'].map((appName) =>
        store.prisma.app.create({ data: { appName, bot: '@space_bot', domains: ['s.example'] } }),
      ),
    );
    await events.insert(launches(kept, '2026-09-01'));
    const filled = await eventsBytes();

    // the app keeps 30 days: its September events go, and as many events of today take their place
    await store.sql.query(`UPDATE apps SET retention_days = 30 WHERE id = $1`, [kept]);
    expect((await new RetentionPurger(store.sql, undefined, { now: () => NOW }).purgeExpired()).events).toBe(3_000);
    await events.insert(launches(kept, TODAY));
    expect(await eventsBytes()).toBeLessThan(filled * 1.2);

    // a deleted app's events go, and another app's take their place
    await events.insert(launches(deleted, TODAY));
    const withDeleted = await eventsBytes();
    await store.prisma.app.delete({ where: { id: deleted } });
    await new DeletedAppPurger(store.sql).purgeDeletedApps();
    await events.insert(launches(kept, '2026-11-23'));
    expect(await eventsBytes()).toBeLessThan(withDeleted * 1.1);
  });
});

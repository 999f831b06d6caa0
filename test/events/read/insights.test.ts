// Insights on both engines against a seeded data set whose answers are worked out by hand below: users with known
// first and return days (one of them moved to an earlier cohort by a late event), sessions walking known funnel
// paths, campaigns, custom events with properties, and the bounds that keep one noisy app's custom events small.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/db/store.ts';
import {
  MAX_CUSTOM_NAMES,
  MAX_CUSTOM_PROPERTIES,
  MAX_CUSTOM_VALUES,
  NO_NAME,
  OTHER,
} from '../../../src/events/custom-events.ts';
import { entryCount } from '../../../src/events/write/funnel-posting-format.ts';
import { InsightsReader } from '../../../src/events/read/insights.ts';
import { RollupReader } from '../../../src/events/read/dashboard.ts';
import { SqlEventPlane, type EventRow } from '../../../src/events/write/event-plane.ts';
import { eventRow } from '../../helpers/events.ts';
import { someoneWaitsFor } from '../../helpers/postgres.ts';
import { STORE_BACKEND } from '../../helpers/stores.ts';

const PERIOD = { from: '2026-10-01', to: '2026-10-31' };
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const userKey = (user: string) => crypto.createHash('sha256').update(user).digest().subarray(0, 16);
const sessionId = (session: string) => {
  const hex = crypto.createHash('md5').update(session).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** launch attributes of some users (the others: ios, en, not premium) */
const ATTRIBUTES: Record<string, Partial<EventRow>> = {
  B: { isPremium: true },
  C: { platform: 'android' },
  D: { platform: 'android', locale: 'ru' },
};

/** the sessions whose launch Telegram signed: A's three and D's first */
const VERIFIED = new Set(['A1', 'A2', 'A3', 'D1']);

/** an event of `user` in `session` at an ISO time (UTC), received then (an app-init: checked as VERIFIED says) */
function event(
  appId: number,
  user: string,
  session: string,
  at: string,
  eventName: string,
  extra: { startParam?: string; custom?: Record<string, unknown> } = {},
): EventRow {
  return eventRow(appId, {
    receivedAt: new Date(at),
    day: at.slice(0, 10),
    eventName,
    sessionId: sessionId(session),
    userKey: userKey(user),
    startParam: extra.startParam ?? null,
    props: extra.custom ? { custom_data: extra.custom } : {},
    ...ATTRIBUTES[user],
    ...(eventName !== 'app-init'
      ? {}
      : VERIFIED.has(session)
        ? { launchCheck: 'verified', launchDay: at.slice(0, 10), launchProof: userKey(session) }
        : { launchCheck: 'no_proof' }),
  });
}

/**
 * Users A, B, C first seen 2026-10-01 (A back on 10-02 and 10-08, B on 10-08), D first seen 10-05 (back 10-06),
 * E first seen 10-07 until a late event puts its first day on 10-05, F first seen 2026-09-20 (before the period).
 * Each group is one commit, in this order.
 */
function seed(app: number): EventRow[][] {
  const a = { startParam: 'ref_a' };
  const b = { startParam: 'ref_b' };
  return [
    [event(app, 'F', 'F1', '2026-09-20T09:00:00Z', 'app-init', a)],
    [
      event(app, 'A', 'A1', '2026-10-01T09:00:00Z', 'app-init', a),
      event(app, 'A', 'A1', '2026-10-01T09:05:00Z', 'connection-started', a),
      event(app, 'A', 'A1', '2026-10-01T09:10:00Z', 'connection-completed', a),
      event(app, 'A', 'A1', '2026-10-01T09:20:00Z', 'custom-event', {
        ...a,
        custom: { name: 'purchase', sku: 'gold', qty: 2 },
      }),
      event(app, 'B', 'B1', '2026-10-01T11:00:00Z', 'app-init', a),
      event(app, 'C', 'C1', '2026-10-01T13:00:00Z', 'app-init', b),
      event(app, 'C', 'C1', '2026-10-01T15:00:00Z', 'connection-started', b),
      event(app, 'C', 'C1', '2026-10-01T15:10:00Z', 'custom-event', { ...b, custom: { name: 'share' } }),
    ],
    [
      event(app, 'A', 'A2', '2026-10-02T10:00:00Z', 'app-init', a),
      event(app, 'A', 'A2', '2026-10-02T10:01:00Z', 'connection-started', a),
      event(app, 'A', 'A2', '2026-10-02T10:02:00Z', 'custom-event', {
        ...a,
        custom: { name: 'purchase', sku: 'gold' },
      }),
      event(app, 'F', 'F2', '2026-10-03T09:00:00Z', 'app-init', a),
      event(app, 'F', 'F2', '2026-10-03T09:05:00Z', 'connection-completed', a),
    ],
    [
      // D's funnel starts at its app-init, not at the connection-started before it
      event(app, 'D', 'D1', '2026-10-05T08:00:00Z', 'connection-started'),
      event(app, 'D', 'D1', '2026-10-05T08:01:00Z', 'app-init'),
      event(app, 'D', 'D1', '2026-10-05T08:02:00Z', 'connection-started'),
      event(app, 'D', 'D1', '2026-10-05T08:03:00Z', 'custom-event', { custom: { sku: 'x' } }),
      event(app, 'D', 'D2', '2026-10-06T08:00:00Z', 'app-init'),
    ],
    [
      event(app, 'E', 'E2', '2026-10-07T09:00:00Z', 'app-init', { startParam: 'late_param' }),
      event(app, 'E', 'E2', '2026-10-07T09:01:00Z', 'connection-completed', { startParam: 'late_param' }),
    ],
    // E's earlier session arrives late: E is new on 10-05, arriving with ref_b
    [event(app, 'E', 'E1', '2026-10-05T20:00:00Z', 'app-init', b)],
    [
      event(app, 'A', 'A3', '2026-10-08T12:00:00Z', 'app-init', a),
      event(app, 'B', 'B2', '2026-10-08T11:00:00Z', 'app-init', a),
      event(app, 'B', 'B2', '2026-10-08T11:30:00Z', 'custom-event', {
        ...a,
        custom: { name: 'purchase', sku: 'silver' },
      }),
    ],
  ];
}

/** a statement a reader ran, with its parameters */
interface RecordedQuery {
  text: string;
  params: unknown[];
}

describe(`insights on ${STORE_BACKEND.name}`, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let events: SqlEventPlane;
  let insights: InsightsReader;
  let appId: number;

  beforeAll(async () => {
    ({ store, cleanup } = await STORE_BACKEND.open());
    events = new SqlEventPlane(store.sql);
    insights = new InsightsReader(store.sql);
    appId = (
      await store.prisma.app.create({ data: { appName: 'seeded_app', bot: '@seeded_bot', domains: ['s.example'] } })
    ).id;
    for (const commit of seed(appId)) await events.insert(commit);
  });
  afterAll(() => cleanup?.());

  /** a reader on the store that records every statement it runs (a COPY's select as one without parameters) */
  function recordingReader(queries: RecordedQuery[]): InsightsReader {
    return new InsightsReader({
      ...store.sql,
      query: (text: string, params?: unknown[]) => {
        queries.push({ text, params: params ?? [] });
        return store.sql.query(text, params);
      },
      copyBinary:
        store.sql.copyBinary &&
        (<Column extends string>(select: string, columns: readonly Column[], texts?: readonly string[]) => {
          queries.push({ text: select, params: [...(texts ?? [])] });
          return store.sql.copyBinary!(select, columns, texts);
        }),
    } as typeof store.sql);
  }

  it('sums up a period: events and sessions in it, users active in it, users new in it', async () => {
    // A 8 events, B 3, C 3, D 5, E 3, F 2 (its September event is outside); 11 sessions began in October
    // A and D have launches Telegram signed
    expect(await insights.summary(appId, PERIOD)).toEqual({
      events: 24,
      users: 6,
      verified_users: 2,
      sessions: 11,
      new_users: 5,
    });
    expect(await insights.summary(appId, { from: '2026-10-05', to: '2026-10-06' })).toEqual({
      events: 6,
      users: 2,
      verified_users: 1,
      sessions: 3,
      new_users: 2,
    });
  });

  it('groups new users into cohorts by their first day and counts who came back on each later day', async () => {
    const { cohorts } = await insights.retention(appId, PERIOD);
    const expected1 = new Array(31).fill(0);
    Object.assign(expected1, { 0: 3, 1: 1, 7: 2 });
    const expected5 = new Array(27).fill(0);
    Object.assign(expected5, { 0: 2, 1: 1, 2: 1 });
    expect(cohorts).toEqual([
      { day: '2026-10-01', users: 3, retained: expected1, complete: 31 },
      { day: '2026-10-05', users: 2, retained: expected5, complete: 27 },
    ]);
    // a cohort is followed up to the period's end
    expect((await insights.retention(appId, { from: '2026-10-01', to: '2026-10-03' })).cohorts).toEqual([
      { day: '2026-10-01', users: 3, retained: [3, 1, 0], complete: 3 },
    ]);
  });

  it('marks what falls on today as still growing: the cells of retention, the day of the dashboard', async () => {
    // read on 2026-10-03 at noon: of the cohort of 10-01, days 0 and 1 are over, day 2 (today) is not
    const onTheThird = () => Date.parse('2026-10-03T12:00:00Z');
    const period = { from: '2026-10-01', to: '2026-10-03' };
    expect((await new InsightsReader(store.sql, onTheThird).retention(appId, period)).cohorts).toEqual([
      { day: '2026-10-01', users: 3, retained: [3, 1, 0], complete: 2 },
    ]);
    const dashboard = await new RollupReader(store.sql, onTheThird).dashboard(appId, period);
    expect(dashboard.days.map((day) => [day.day, day.complete])).toEqual([
      ['2026-10-01', true],
      ['2026-10-02', true],
      ['2026-10-03', false],
    ]);
  });

  it('follows sessions and users through the steps of a funnel within its window, with median times', async () => {
    const steps = ['app-init', 'connection-started', 'connection-completed'];
    expect(await insights.funnel(appId, PERIOD, { steps, by: 'session', windowMs: HOUR })).toEqual({
      steps: [
        { name: 'app-init', count: 11, median_seconds_from_previous: null },
        { name: 'connection-started', count: 3, median_seconds_from_previous: 60 },
        { name: 'connection-completed', count: 1, median_seconds_from_previous: 300 },
      ],
    });
    expect(await insights.funnel(appId, PERIOD, { steps, by: 'user', windowMs: HOUR })).toEqual({
      steps: [
        { name: 'app-init', count: 6, median_seconds_from_previous: null },
        { name: 'connection-started', count: 2, median_seconds_from_previous: 180 },
        { name: 'connection-completed', count: 1, median_seconds_from_previous: 300 },
      ],
    });
    // C's connection two hours after its launch counts within a day
    const day = await insights.funnel(appId, PERIOD, { steps, by: 'user', windowMs: DAY });
    expect(day.steps.map((step) => step.count)).toEqual([6, 3, 1]);
    // a custom event as a step: A bought 20 minutes after launching; B a week after, outside the window
    const custom = await insights.funnel(appId, PERIOD, { steps: ['app-init', 'purchase'], by: 'user', windowMs: DAY });
    expect(custom.steps).toEqual([
      { name: 'app-init', count: 6, median_seconds_from_previous: null },
      { name: 'purchase', count: 1, median_seconds_from_previous: 1200 },
    ]);
    // custom-event as a step is any custom event, named or not: A's purchase after 20 minutes, D's nameless one after
    // 2 minutes; C shared after 2 h 10 min, within a day only
    const anyCustom = { steps: ['app-init', 'custom-event'], by: 'user' as const };
    expect((await insights.funnel(appId, PERIOD, { ...anyCustom, windowMs: HOUR })).steps).toEqual([
      { name: 'app-init', count: 6, median_seconds_from_previous: null },
      { name: 'custom-event', count: 2, median_seconds_from_previous: 660 },
    ]);
    expect(
      (await insights.funnel(appId, PERIOD, { ...anyCustom, windowMs: DAY })).steps.map((step) => step.count),
    ).toEqual([6, 3]);
    // a custom event narrowed by a property: within 8 days, A and B bought, but only A bought gold (a number
    // property matches as written in JSON)
    const week = { by: 'user' as const, windowMs: 8 * DAY };
    const byProperty = async (step: string) =>
      (await insights.funnel(appId, PERIOD, { ...week, steps: ['app-init', step] })).steps.map((s) => s.count);
    expect(await byProperty('purchase')).toEqual([6, 2]);
    expect(await byProperty('purchase[sku=gold]')).toEqual([6, 1]);
    expect(await byProperty('purchase[sku=silver]')).toEqual([6, 1]);
    expect(await byProperty('purchase[qty=2]')).toEqual([6, 1]);
    expect(await byProperty('purchase[sku=platinum]')).toEqual([6, 0]);
    expect(
      (await insights.funnel(appId, PERIOD, { ...week, steps: ['app-init', 'purchase[sku=gold]'] })).steps[1]!.name,
    ).toBe('purchase[sku=gold]');
  });

  it('never lets one event fill two steps of a funnel; two events of one millisecond may follow each other', async () => {
    const app = (
      await store.prisma.app.create({ data: { appName: 'one_event_app', bot: '@one_bot', domains: ['one.example'] } })
    ).id;
    const at = '2026-10-12T12:00:05.000Z';
    const later = '2026-10-13T12:00:05.000Z';
    const purchase = (sku: string) => ({ custom: { name: 'purchase', sku } });
    await events.insert([
      // U taps and hides in the same millisecond: one tap, one hide
      event(app, 'U', 'U1', at, 'custom-event', { custom: { name: 'tap' } }),
      event(app, 'U', 'U1', at, 'app-hide'),
      // P1 buys gold, and gold again a day later; P2 buys gold once; P3 buys silver
      event(app, 'P1', 'P1', at, 'custom-event', purchase('gold')),
      event(app, 'P1', 'P1b', later, 'custom-event', purchase('gold')),
      event(app, 'P2', 'P2', at, 'custom-event', purchase('gold')),
      event(app, 'P3', 'P3', at, 'custom-event', purchase('silver')),
      // G buys gold and silver in one millisecond; D taps twice in one millisecond
      event(app, 'G', 'G1', at, 'custom-event', purchase('gold')),
      event(app, 'G', 'G1', at, 'custom-event', purchase('silver')),
      event(app, 'D', 'D1', at, 'custom-event', { custom: { name: 'double' } }),
      event(app, 'D', 'D1', at, 'custom-event', { custom: { name: 'double' } }),
    ]);
    const counts = async (steps: string[]) =>
      (await insights.funnel(app, PERIOD, { steps, by: 'user', windowMs: 7 * DAY })).steps;
    expect((await counts(['tap', 'app-hide', 'tap'])).map((step) => step.count)).toEqual([1, 1, 0]);
    expect((await counts(['tap', 'app-hide'])).map((step) => step.count)).toEqual([1, 1]);
    // only P1 bought gold after a first purchase (G's first is gold or silver, its other the other): the first
    // purchase cannot be the gold one too
    const afterPurchase = await counts(['purchase', 'purchase[sku=gold]']);
    expect(afterPurchase[0]).toEqual({ name: 'purchase', count: 4, median_seconds_from_previous: null });
    expect([1, 2]).toContain(afterPurchase[1]!.count);
    expect((await counts(['purchase[sku=silver]', 'purchase[sku=gold]'])).map((step) => step.count)).toEqual([2, 1]);
    expect((await counts(['purchase[sku=gold]', 'purchase[sku=silver]'])).map((step) => step.count)).toEqual([3, 1]);
    // two events of one millisecond are two steps
    expect((await counts(['double', 'double'])).map((step) => step.count)).toEqual([1, 1]);
    expect((await counts(['double', 'double', 'double'])).map((step) => step.count)).toEqual([1, 1, 0]);
  });

  it('counts a session once, on the day it started, with a filter as without one', async () => {
    const app = (
      await store.prisma.app.create({ data: { appName: 'late_session_app', bot: '@late_bot', domains: ['l.example'] } })
    ).id;
    const android = { platform: 'android' };
    // X (android, with a campaign) and Y both start before midnight and end after it
    await events.insert([
      { ...event(app, 'X', 'X1', '2026-10-20T23:59:59.999Z', 'app-init', { startParam: 'late_c' }), ...android },
      { ...event(app, 'X', 'X1', '2026-10-21T00:00:00.000Z', 'app-hide'), ...android },
      event(app, 'Y', 'Y1', '2026-10-20T23:50:00Z', 'app-init'),
      event(app, 'Y', 'Y1', '2026-10-21T00:10:00Z', 'app-hide'),
    ]);
    const sessions = async (day: string, filter = {}) =>
      (await insights.summary(app, { from: day, to: day }, filter)).sessions;
    expect([await sessions('2026-10-20'), await sessions('2026-10-21')]).toEqual([2, 0]);
    // a filter that keeps every event counts the same sessions
    expect([
      await sessions('2026-10-20', { premium: false }),
      await sessions('2026-10-21', { premium: false }),
    ]).toEqual([2, 0]);
    expect([await sessions('2026-10-20', android), await sessions('2026-10-21', android)]).toEqual([1, 0]);
    const both = { from: '2026-10-20', to: '2026-10-21' };
    for (const filter of [{}, { premium: false }]) {
      const dashboard = await new RollupReader(store.sql).dashboard(app, both, filter);
      expect(dashboard.days.map((day) => [day.day, day.sessions])).toEqual([
        ['2026-10-20', 2],
        ['2026-10-21', 0],
      ]);
      expect(dashboard.dimensions.start_param).toEqual([
        { value: '', sessions: 1 },
        { value: 'late_c', sessions: 1 },
      ]);
    }
    // the day after alone: the sessions started the day before are not counted, with a filter or without
    const after = { from: '2026-10-21', to: '2026-10-21' };
    for (const filter of [{}, { premium: false }])
      expect((await new RollupReader(store.sql).dashboard(app, after, filter)).totals.sessions).toBe(0);
  });

  it('counts a session under the attributes of its first event, whatever the order in the request', async () => {
    const app = (
      await store.prisma.app.create({
        data: { appName: 'session_first_app', bot: '@sfirst_bot', domains: ['sf.example'] },
      })
    ).id;
    // one request (one time of receipt): the hide, sent first, from ios; the launch before it from android
    const received = new Date('2026-10-23T10:05:00Z');
    await events.insert([
      { ...event(app, 'Z', 'Z1', '2026-10-23T10:01:00Z', 'app-hide'), platform: 'ios', receivedAt: received },
      { ...event(app, 'Z', 'Z1', '2026-10-23T10:00:00Z', 'app-init'), platform: 'android', receivedAt: received },
    ]);
    const dashboard = await new RollupReader(store.sql).dashboard(app, { from: '2026-10-23', to: '2026-10-23' });
    expect(dashboard.dimensions.platform).toEqual([{ value: 'android', sessions: 1 }]);
  });

  it('first sees a user with the attributes of their first event, also when it arrives after a later one', async () => {
    const app = (
      await store.prisma.app.create({ data: { appName: 'late_first_app', bot: '@first_bot', domains: ['f.example'] } })
    ).id;
    const noon = (user: string) => ({
      ...event(app, user, `${user}1`, '2026-10-22T12:00:00Z', 'app-init'),
      platform: 'android',
    });
    const morning = (user: string) => ({
      ...event(app, user, `${user}0`, '2026-10-22T08:00:00Z', 'app-init', { startParam: 'promo_c' }),
      platform: 'ios',
    });
    // L's noon launch is stored a commit before its morning launch; M's two launches come in one commit
    await events.insert([noon('L')]);
    await events.insert([morning('L'), noon('M'), morning('M')]);
    const period = { from: '2026-10-01', to: '2026-10-31' };
    expect((await insights.campaigns(app, period)).campaigns).toEqual([
      { start_param: 'promo_c', new_users: 2, retained_d7: 0, wallet_connections: 0 },
    ]);
    expect((await insights.summary(app, period, { platform: 'ios' })).new_users).toBe(2);
    expect((await insights.summary(app, period, { platform: 'android' })).new_users).toBe(0);
    expect(
      (await insights.retention(app, period, { campaign: 'promo_c' })).cohorts.map((c) => [c.day, c.users]),
    ).toEqual([['2026-10-22', 2]]);
    // a later event of an earlier day moves the cohort and the attributes again
    await events.insert([{ ...event(app, 'L', 'L9', '2026-10-21T23:00:00Z', 'app-init'), platform: 'tdesktop' }]);
    expect((await insights.summary(app, period, { platform: 'tdesktop' })).new_users).toBe(1);
    expect((await insights.retention(app, period)).cohorts.map((c) => [c.day, c.users])).toEqual([
      ['2026-10-21', 1],
      ['2026-10-22', 1],
    ]);
  });

  it("reads only a funnel's steps' postings, by their place in the postings' primary key", async () => {
    const queries: RecordedQuery[] = [];
    const recording = recordingReader(queries);
    for (const steps of [
      ['app-init', 'connection-started'],
      ['app-init', 'purchase', 'custom-event'],
    ]) {
      queries.length = 0;
      await recording.funnel(appId, PERIOD, { steps, by: 'user', windowMs: DAY });
      const scans: string[] = [];
      for (const { text, params } of queries) {
        const plan = await store.sql.transaction(async (tx) => {
          await tx.query('ANALYZE funnel_postings');
          await tx.query('SET LOCAL enable_seqscan = off');
          return tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params);
        });
        scans.push(plan.map((line) => line['QUERY PLAN']).join('\n'));
      }
      // one statement, reading a range of the primary key per step: a step's name, or every custom event's for
      // custom-event (which holds purchase's too), never the app's other rows filtered
      expect(scans).toHaveLength(1);
      expect(scans[0]).toMatch(/Index Cond: [^\n]*\(?step (= '[^']+'|>= 'custom-event:'|= ANY)/);
      expect(scans[0]).not.toMatch(/Filter: [^\n]*step/);
    }
  });

  it('follows a step whose name holds quotes and backslashes', async () => {
    const app = (
      await store.prisma.app.create({ data: { appName: 'quoted_app', bot: '@quoted_bot', domains: ['o.example'] } })
    ).id;
    const name = "it's a \\ step\\'";
    await events.insert([
      event(app, 'A', 'A1', '2026-10-03T10:00:00Z', 'app-init'),
      event(app, 'A', 'A1', '2026-10-03T10:01:00Z', 'custom-event', { custom: { name } }),
      event(app, 'B', 'B1', '2026-10-03T11:00:00Z', 'app-init'),
    ]);
    const funnel = await insights.funnel(app, PERIOD, { steps: ['app-init', name], by: 'user', windowMs: HOUR });
    expect(funnel.steps.map((step) => [step.name, step.count])).toEqual([
      ['app-init', 2],
      [name, 1],
    ]);
  });

  it("reads revenue from the payment events' and the invoices' own indexes, never the app's other events", async () => {
    const queries: RecordedQuery[] = [];
    const recording = recordingReader(queries);
    await recording.revenue(appId, PERIOD);
    expect(queries).toHaveLength(4);
    const plans: string[] = [];
    for (const { text, params } of queries) {
      const plan = await store.sql.transaction(async (tx) => {
        await tx.query('ANALYZE events');
        await tx.query('SET LOCAL enable_seqscan = off');
        return tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, params);
      });
      plans.push(plan.map((line) => line['QUERY PLAN']).join('\n'));
    }
    for (const plan of plans) expect(plan).toMatch(/events_app_id_payment_day_idx/);
    // the Mini App's purchases find their register-invoice by slug in the invoices' partial index
    expect(plans.filter((plan) => plan.includes('events_app_id_invoice_slug_idx'))).toHaveLength(1);
  });

  it('lists custom events with their users, and the values of a property', async () => {
    // each with the properties whose values can be read
    expect(await insights.customEvents(appId, PERIOD)).toEqual({
      events: [
        { name: 'purchase', count: 3, users: 2, properties: ['qty', 'sku'] },
        { name: NO_NAME, count: 1, users: 1, properties: ['sku'] },
        { name: 'share', count: 1, users: 1, properties: [] },
      ],
    });
    // a period before some users' last custom event: A bought on 10-01 and 10-02, C shared on 10-01
    expect(await insights.customEvents(appId, { from: '2026-10-01', to: '2026-10-02' })).toEqual({
      events: [
        { name: 'purchase', count: 2, users: 1, properties: ['qty', 'sku'] },
        { name: 'share', count: 1, users: 1, properties: [] },
      ],
    });
    expect(await insights.customPropertyValues(appId, PERIOD, 'purchase', 'sku')).toEqual({
      values: [
        { value: 'gold', count: 2 },
        { value: 'silver', count: 1 },
      ],
    });
    expect(await insights.customPropertyValues(appId, PERIOD, 'purchase', 'qty')).toEqual({
      values: [{ value: '2', count: 1 }],
    });
    expect(
      await insights.customPropertyValues(appId, { from: '2026-10-08', to: '2026-10-08' }, 'purchase', 'sku'),
    ).toEqual({ values: [{ value: 'silver', count: 1 }] });
    expect(await insights.customPropertyValues(appId, PERIOD, 'purchase', 'colour')).toEqual({ values: [] });
  });

  it('counts a custom event once, whether its batch is all new or holds events sent before', async () => {
    const app = (
      await store.prisma.app.create({ data: { appName: 'resend_app', bot: '@resend_bot', domains: ['r.example'] } })
    ).id;
    const buy = (user: string, at: string, sku: string) =>
      event(app, user, `${user}1`, at, 'custom-event', { custom: { name: 'buy', sku } });
    const first = [buy('R', '2026-10-03T10:00:00Z', 'gold'), buy('S', '2026-10-03T10:01:00Z', 'gold')];
    await events.insert(first);
    // sent again beside a new event, then again alone: each event counted once
    await events.insert([first[0]!, buy('T', '2026-10-03T10:02:00Z', 'silver')]);
    await events.insert([first[1]!]);
    const custom = await insights.customEvents(app, PERIOD);
    expect(custom).toEqual({ events: [{ name: 'buy', count: 3, users: 3, properties: ['sku'] }] });
    const values = {
      values: [
        { value: 'gold', count: 2 },
        { value: 'silver', count: 1 },
      ],
    };
    expect(await insights.customPropertyValues(app, PERIOD, 'buy', 'sku')).toEqual(values);
    // the same numbers from the events themselves (a filter that keeps every event)
    expect(await insights.customEvents(app, PERIOD, { premium: false })).toEqual(custom);
    expect(await insights.customPropertyValues(app, PERIOD, 'buy', 'sku', { premium: false })).toEqual(values);
  });

  it('keeps a resent event where it was first stored: its funnel step and its user once, on its first day', async () => {
    const app = (
      await store.prisma.app.create({ data: { appName: 'retry_app', bot: '@retry_bot', domains: ['q.example'] } })
    ).id;
    // a client with a wrong clock is timed at receipt: its retry, past midnight, has the same key at another time
    const sent = event(app, 'Q', 'Q1', '2026-10-03T23:58:00Z', 'app-init');
    const retried: EventRow = {
      ...sent,
      receivedAt: new Date('2026-10-04T00:03:00Z'),
      occurredAt: new Date('2026-10-04T00:03:00Z'),
      day: '2026-10-04',
    };
    await events.insert([sent]);
    await events.insert([retried]);
    // beside new events, whose user, campaign and wallet count as when their batch is all new
    const ref = { startParam: 'ref_p' };
    await events.insert([
      retried,
      event(app, 'P', 'P1', '2026-10-04T00:04:00Z', 'app-init', ref),
      event(app, 'P', 'P1', '2026-10-04T00:05:00Z', 'connection-completed', ref),
    ]);
    await events.insert([sent]);

    const funnel = await insights.funnel(app, PERIOD, { steps: ['app-init', 'app-init'], by: 'user', windowMs: DAY });
    expect(funnel.steps.map((step) => step.count)).toEqual([2, 0]);
    expect(await insights.summary(app, { from: '2026-10-03', to: '2026-10-03' })).toMatchObject({
      events: 1,
      users: 1,
    });
    expect(await insights.summary(app, { from: '2026-10-04', to: '2026-10-04' })).toMatchObject({
      events: 2,
      users: 1,
    });
    expect(await insights.campaigns(app, PERIOD)).toEqual({
      campaigns: [{ start_param: 'ref_p', new_users: 1, retained_d7: 0, wallet_connections: 1 }],
    });
    const postings = await store.sql.query<{ entries: Uint8Array }>(
      'SELECT entries FROM funnel_postings WHERE app_id = $1',
      [app],
    );
    const stored = postings.map(({ entries }) => entryCount(Buffer.from(entries)));
    expect(stored.reduce((sum, count) => sum + count, 0)).toBe(3);
  });

  it("counts a property's values as the stored events read them, numbers too", async () => {
    const app = (
      await store.prisma.app.create({ data: { appName: 'numbers_app', bot: '@numbers_bot', domains: ['n.example'] } })
    ).id;
    const values = [1e21, 1.5e-10, -2.5e-7, 123, 0.1, -0, 2 ** 70, true, 'x'.repeat(70), '😀'.repeat(70)];
    await events.insert(
      values.map((value, index) =>
        event(app, 'N', 'N1', `2026-10-04T10:00:0${index}Z`.replace(/:0(\d\d)Z/, ':$1Z'), 'custom-event', {
          custom: { name: 'n', value, ['k'.repeat(70)]: 'long key' },
        }),
      ),
    );
    // counted at ingest (every event of the batch new) and read back from the events (a filter keeping all)
    const counted = await insights.customPropertyValues(app, PERIOD, 'n', 'value');
    expect(await insights.customPropertyValues(app, PERIOD, 'n', 'value', { premium: false })).toEqual(counted);
    // a property's name is cut as its values are, read from the rollups and from the events (a filter) alike
    const longKey = { values: [{ value: 'long key', count: values.length }] };
    expect(await insights.customPropertyValues(app, PERIOD, 'n', 'k'.repeat(64))).toEqual(longKey);
    expect(await insights.customPropertyValues(app, PERIOD, 'n', 'k'.repeat(64), { premium: false })).toEqual(longKey);
    // custom_data that is not an object has no properties
    await events.insert([
      event(app, 'N', 'N1', '2026-10-04T11:00:00Z', 'custom-event', { custom: { '0': 'a' } }),
      event(app, 'N', 'N1', '2026-10-04T11:00:01Z', 'custom-event', {
        custom: ['b'] as unknown as Record<string, unknown>,
      }),
    ]);
    const unnamed = { values: [{ value: 'a', count: 1 }] };
    expect(await insights.customPropertyValues(app, PERIOD, '(no name)', '0')).toEqual(unnamed);
    expect(await insights.customPropertyValues(app, PERIOD, '(no name)', '0', { premium: false })).toEqual(unnamed);
    expect(
      (await insights.customPropertyValues(app, PERIOD, 'n', 'value')).values.map((entry) => entry.value).sort(),
    ).toEqual(
      [
        '1000000000000000000000',
        '0.00000000015',
        '-0.00000025',
        '123',
        '0.1',
        '0',
        '1180591620717411300000',
        'true',
        'x'.repeat(64),
        '😀'.repeat(64),
      ].sort(),
    );
  });

  it('judges each campaign by the new users it brought: how many, back on day 7, with a wallet connected', async () => {
    expect(await insights.campaigns(appId, PERIOD)).toEqual({
      campaigns: [
        { start_param: 'ref_a', new_users: 2, retained_d7: 2, wallet_connections: 1 },
        { start_param: 'ref_b', new_users: 2, retained_d7: 0, wallet_connections: 1 },
      ],
    });
    // day 7 of the 10-01 cohort is after this period: not counted yet
    expect(await insights.campaigns(appId, { from: '2026-10-01', to: '2026-10-07' })).toEqual({
      campaigns: [
        { start_param: 'ref_a', new_users: 2, retained_d7: 0, wallet_connections: 1 },
        { start_param: 'ref_b', new_users: 2, retained_d7: 0, wallet_connections: 1 },
      ],
    });
  });

  it('narrows every card to the events (and new users) of a platform, a language, premium or a campaign', async () => {
    const android = { platform: 'android' };
    // C: 3 events in C1; D: 5 in D1 and D2; both first seen on Android
    expect(await insights.summary(appId, PERIOD, android)).toEqual({
      events: 8,
      users: 2,
      verified_users: 1,
      sessions: 3,
      new_users: 2,
    });
    // ref_b: the users it brought (C and E, first seen with it) with all they did: C's three events, E's late
    // session and E's later one launched with another start_param
    expect(await insights.summary(appId, PERIOD, { campaign: 'ref_b' })).toEqual({
      events: 6,
      users: 2,
      verified_users: 0,
      sessions: 3,
      new_users: 2,
    });
    expect(await insights.summary(appId, PERIOD, { premium: true })).toEqual({
      events: 3,
      users: 1,
      verified_users: 0,
      sessions: 2,
      new_users: 1,
    });
    expect(await insights.summary(appId, PERIOD, { language: 'ru', platform: 'android' })).toEqual({
      events: 5,
      users: 1,
      verified_users: 1,
      sessions: 2,
      new_users: 1,
    });
    expect(await insights.summary(appId, PERIOD, { platform: 'weba' })).toEqual({
      events: 0,
      users: 0,
      verified_users: 0,
      sessions: 0,
      new_users: 0,
    });

    const { cohorts } = await insights.retention(appId, PERIOD, android);
    expect(cohorts.map((cohort) => [cohort.day, cohort.users, cohort.retained.slice(0, 3)])).toEqual([
      ['2026-10-01', 1, [1, 0, 0]],
      ['2026-10-05', 1, [1, 1, 0]],
    ]);
    expect(await insights.campaigns(appId, PERIOD, android)).toEqual({
      campaigns: [{ start_param: 'ref_b', new_users: 1, retained_d7: 0, wallet_connections: 0 }],
    });
    expect(await insights.customEvents(appId, PERIOD, android)).toEqual({
      events: [
        { name: NO_NAME, count: 1, users: 1, properties: ['sku'] },
        { name: 'share', count: 1, users: 1, properties: [] },
      ],
    });
    expect(await insights.customPropertyValues(appId, PERIOD, 'purchase', 'sku', { premium: true })).toEqual({
      values: [{ value: 'silver', count: 1 }],
    });
    expect(await insights.customPropertyValues(appId, PERIOD, 'purchase', 'sku', { premium: false })).toEqual({
      values: [{ value: 'gold', count: 2 }],
    });
    const funnel = await insights.funnel(
      appId,
      PERIOD,
      { steps: ['app-init', 'connection-started'], by: 'user', windowMs: DAY },
      android,
    );
    expect(funnel.steps.map((step) => step.count)).toEqual([2, 2]);
  });

  it('narrows every card to verified traffic (sessions Telegram signed, users with such a launch), or to the rest', async () => {
    const verified = { verified: true };
    const rest = { verified: false };
    // A1 (4 events), A2 (3), A3 (1) and D1 (4)
    expect(await insights.summary(appId, PERIOD, verified)).toEqual({
      events: 12,
      users: 2,
      verified_users: 2,
      sessions: 4,
      new_users: 2,
    });
    // B, C, D (in D2), E and F; of the users new in October, B, C and E never had a verified launch
    expect(await insights.summary(appId, PERIOD, rest)).toEqual({
      events: 12,
      users: 5,
      verified_users: 0,
      sessions: 7,
      new_users: 3,
    });
    const { cohorts } = await insights.retention(appId, PERIOD, verified);
    expect(cohorts.map((cohort) => [cohort.day, cohort.users, cohort.retained.slice(0, 2)])).toEqual([
      ['2026-10-01', 1, [1, 1]],
      ['2026-10-05', 1, [1, 1]],
    ]);
    const steps = { steps: ['app-init', 'connection-started'], by: 'user' as const, windowMs: DAY };
    expect((await insights.funnel(appId, PERIOD, steps, verified)).steps.map((step) => step.count)).toEqual([2, 2]);
    expect((await insights.funnel(appId, PERIOD, steps, rest)).steps.map((step) => step.count)).toEqual([4, 1]);
    const dashboard = await new RollupReader(store.sql).dashboard(appId, PERIOD, verified);
    expect(dashboard.totals).toEqual({ events: 12, users: 2, verifiedUsers: 2, sessions: 4 });
    expect((await new RollupReader(store.sql).dashboard(appId, PERIOD)).totals).toMatchObject({ verifiedUsers: 2 });
  });

  it("bounds one app's custom names, properties and values, counting the rest as (other)", async () => {
    const noisy = (
      await store.prisma.app.create({ data: { appName: 'noisy_app', bot: '@noisy_bot', domains: ['n.example'] } })
    ).id;
    const at = '2026-10-10T10:00:00Z';
    const extraNames = 5;
    // names: one event each, in two commits (the limit holds across commits)
    const names = Array.from({ length: MAX_CUSTOM_NAMES + extraNames }, (_, i) =>
      event(noisy, `u${i}`, `s${i}`, at, 'custom-event', { custom: { name: `name_${String(i).padStart(3, '0')}` } }),
    );
    await events.insert(names.slice(0, 60));
    await events.insert(names.slice(60));
    // values: 130 distinct values of `v`, each sent once, and value_000 nine times more
    const values = Array.from({ length: MAX_CUSTOM_VALUES + 30 }, (_, i) =>
      event(noisy, 'v', 'sv', at, 'custom-event', {
        custom: { name: 'name_000', v: `value_${String(i).padStart(3, '0')}` },
      }),
    );
    const popular = Array.from({ length: 9 }, () =>
      event(noisy, 'v', 'sv', at, 'custom-event', { custom: { name: 'name_000', v: 'value_000' } }),
    );
    await events.insert([...values, ...popular]);
    // properties: one event with 25 properties
    const properties = Object.fromEntries(
      Array.from({ length: MAX_CUSTOM_PROPERTIES + 5 }, (_, i) => [`p${String(i).padStart(2, '0')}`, i]),
    );
    await events.insert([event(noisy, 'p', 'sp', at, 'custom-event', { custom: { name: 'name_001', ...properties } })]);

    const { events: listed } = await insights.customEvents(noisy, PERIOD);
    // 100 names tracked; the 5 beyond them are one (other)
    expect(listed).toHaveLength(MAX_CUSTOM_NAMES + 1);
    expect(listed.find((entry) => entry.name === OTHER)).toEqual({
      name: OTHER,
      count: extraNames,
      users: extraNames,
      properties: [],
    });
    expect(listed.find((entry) => entry.name === 'name_000')).toMatchObject({
      name: 'name_000',
      count: 1 + 130 + 9,
      users: 2,
    });

    const { values: top } = await insights.customPropertyValues(noisy, PERIOD, 'name_000', 'v');
    expect(top).toHaveLength(21);
    expect(top[0]).toEqual({ value: 'value_000', count: 10 });
    expect(top.at(-1)).toEqual({ value: OTHER, count: 130 + 9 - 10 - 19 });
    expect(top.reduce((sum, entry) => sum + entry.count, 0)).toBe(139);
    const tracked = await store.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM custom_catalog WHERE app_id = $1 AND level = 2 AND name = 'name_000'`,
      [noisy],
    );
    expect(tracked[0]!.n).toBe(MAX_CUSTOM_VALUES);

    const tracked1 = await store.sql.query<{ property: string }>(
      `SELECT DISTINCT property FROM daily_custom_values WHERE app_id = $1 AND name = 'name_001' ORDER BY 1`,
      [noisy],
    );
    expect(tracked1.map((row) => row.property)).toEqual(Object.keys(properties).slice(0, MAX_CUSTOM_PROPERTIES));
    // the names listed with the custom event are those whose values are tracked
    const { events: named } = await insights.customEvents(noisy, PERIOD);
    expect(named.find((entry) => entry.name === 'name_001')!.properties).toEqual(
      Object.keys(properties).slice(0, MAX_CUSTOM_PROPERTIES),
    );
  });

  it('counts a user once under (other) when the client also names an event (other)', async () => {
    const app = (
      await store.prisma.app.create({ data: { appName: 'other_named_app', bot: '@other_bot', domains: ['o.example'] } })
    ).id;
    const at = '2026-10-11T10:00:00Z';
    // the client's own "(other)" takes a slot like any name, and the names fill the app
    await events.insert([
      event(app, 'x', 'sx', at, 'custom-event', { custom: { name: OTHER } }),
      ...Array.from({ length: MAX_CUSTOM_NAMES - 1 }, (_, i) =>
        event(app, `f${i}`, `sf${i}`, at, 'custom-event', { custom: { name: `n${String(i).padStart(3, '0')}` } }),
      ),
    ]);
    // beyond the limit: counted as (other), by the same user
    await events.insert([event(app, 'x', 'sx', at, 'custom-event', { custom: { name: 'one_too_many' } })]);
    const { events: listed } = await insights.customEvents(app, PERIOD);
    expect(listed.find((entry) => entry.name === OTHER)).toEqual({ name: OTHER, count: 2, users: 1, properties: [] });
  });
});

// two commits at once need two connections: only a PostgreSQL server has them (the project "postgres")
describe.runIf(STORE_BACKEND.kind === 'server')('custom event names added by two commits at once on PostgreSQL', () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  beforeAll(async () => ({ store, cleanup } = await STORE_BACKEND.open()));
  afterAll(() => cleanup?.());

  it("gives each name its own bit, so each name's users stay its own", async () => {
    const app = (
      await store.prisma.app.create({ data: { appName: 'racing_app', bot: '@racing_bot', domains: ['r.example'] } })
    ).id;
    const at = '2026-10-12T10:00:00Z';
    const named = (user: string, name: string) =>
      event(app, user, `${user}-s`, at, 'custom-event', { custom: { name } });
    let aCommitted = false;
    let bDone = false;
    let bStore: Promise<number> | undefined;
    await store.sql.transaction(async (tx) => {
      // the first commit adds three names and holds its slots until it commits
      await new SqlEventPlane({ ...store.sql, query: tx.query.bind(tx) }).insert([
        named('a1', 'x1'),
        named('a2', 'x2'),
        named('a3', 'x3'),
      ]);
      // the second, from another node, adds one of them and three more meanwhile
      bStore = new SqlEventPlane(store.sql)
        .insert([named('b1', 'x1'), named('b2', 'y1'), named('b3', 'y2'), named('b4', 'y3')])
        .finally(() => (bDone = true));
      // it waits for the first to commit before it takes slots
      await expect
        .poll(() => someoneWaitsFor(store.sql, tx), {
          timeout: 60_000,
          message: 'the second commit waits for the lock of the first',
        })
        .toBe(true);
      expect(bDone).toBe(false);
      aCommitted = true;
    });
    expect(aCommitted).toBe(true);
    expect(await bStore).toBe(4);

    const slots = await store.sql.query<{ name: string; slot: number }>(
      `SELECT name, slot FROM custom_catalog WHERE app_id = $1 AND level = 0 ORDER BY name`,
      [app],
    );
    expect(slots.map((row) => row.name)).toEqual(['x1', 'x2', 'x3', 'y1', 'y2', 'y3']);
    expect(new Set(slots.map((row) => row.slot)).size).toBe(6);
    const { events: listed } = await new InsightsReader(store.sql).customEvents(app, PERIOD);
    expect(listed).toEqual([
      { name: 'x1', count: 2, users: 2, properties: [] },
      { name: 'x2', count: 1, users: 1, properties: [] },
      { name: 'x3', count: 1, users: 1, properties: [] },
      { name: 'y1', count: 1, users: 1, properties: [] },
      { name: 'y2', count: 1, users: 1, properties: [] },
      { name: 'y3', count: 1, users: 1, properties: [] },
    ]);
  });
});

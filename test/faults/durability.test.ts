// Durability: a service process killed with SIGKILL while under load has every event that got 201 in
// the store, and none duplicated after the client retries the requests that were not acknowledged.
// The real service runs as a child process (the build, `node dist/server/main.js`); the app and token are
// made, and the totals read, with the operator CLI; the store is then checked directly.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/store.ts';
import { available } from '../helpers/environment.ts';
import {
  APP_ORIGIN,
  BatchFactory,
  InFlight,
  runLoad,
  sendBody,
  SUCCESS,
  tallyAnswers,
  type Batch,
  type Outcome,
} from '../helpers/load.ts';
import type { TestDatabase } from '../helpers/postgres.ts';
import { embeddedDataDir, migratedDatabase } from '../helpers/stores.ts';
import { tempDir } from '../helpers/service.ts';
import { killAllChildren, logDrained, runCliJson, startServiceProcess } from '../helpers/service-process.ts';

const APP = 'dur_app';
const CLIENT_LOOPS = 16;
const LOAD_MS = 1_500;
const REQUEST_TIMEOUT_MS = 10_000;

const dirs: string[] = [];
afterAll(async () => {
  await killAllChildren();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

type Query = (text: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

interface Variant {
  /** settings of the service and the CLI besides DATA_DIR */
  env: Record<string, string>;
  embedded: boolean;
  /** runs fn on a direct connection to the store (for the embedded store, only while no service owns it) */
  direct<T>(dataDir: string, fn: (query: Query) => Promise<T>): Promise<T>;
}

interface StoreState {
  rows: number;
  /** custom_data.seq → number of stored rows carrying it */
  perSeq: Map<number, number>;
  dailyCountsSum: number;
  activityTotal: number | null;
}

async function readState(query: Query): Promise<StoreState> {
  const [app] = await query(`SELECT id FROM apps WHERE app_name = $1`, [APP]);
  expect(app, `app ${APP} in the store`).toBeDefined();
  const appId = app!.id as number;
  const seqRows = await query(
    `SELECT (props->'custom_data'->>'seq')::int AS seq, count(*)::int AS n FROM events WHERE app_id = $1 GROUP BY 1`,
    [appId],
  );
  const [{ n: rows }] = (await query(`SELECT count(*)::int AS n FROM events WHERE app_id = $1`, [appId])) as [
    { n: number },
  ];
  const [{ n: dailyCountsSum }] = (await query(
    `SELECT coalesce(sum(events), 0)::int AS n FROM daily_event_counts WHERE app_id = $1`,
    [appId],
  )) as [{ n: number }];
  const [activity] = await query(`SELECT events_total::int AS n FROM app_activity WHERE app_id = $1`, [appId]);
  return {
    rows,
    perSeq: new Map(seqRows.map((row) => [row.seq as number, row.n as number])),
    dailyCountsSum,
    activityTotal: activity ? (activity.n as number) : null,
  };
}

function seqsOf(outcomes: Outcome[] | Batch[]): number[] {
  return outcomes.flatMap((entry) => ('batch' in entry ? entry.batch.seqs : entry.seqs));
}

async function killUnderLoadThenRetry(variant: Variant): Promise<void> {
  const phases: string[] = [];
  let phaseStart = performance.now();
  const phase = (name: string) => {
    phases.push(`${name} ${((performance.now() - phaseStart) / 1000).toFixed(1)}s`);
    phaseStart = performance.now();
  };
  const dataDir = variant.embedded ? await embeddedDataDir('tma-durability-') : tempDir('tma-durability-');
  dirs.push(dataDir);
  const env = { ...variant.env, DATA_DIR: dataDir, RATE_LIMIT_MAX: '1000000', LOG_LEVEL: 'warn' };

  // 1. the real service, an app and its token made with the operator CLI (through the operator's socket when embedded)
  const first = await startServiceProcess(env);
  phase('start');
  const created = await runCliJson<{ token: string; app_name: string; domain: string; bot: string }>(env, [
    'tokens',
    'create',
    '--bot',
    '@dur_test_bot',
    '--domain',
    'app.example.com',
    '--app-name',
    APP,
  ]);
  expect(created).toMatchObject({ app_name: APP, domain: 'app.example.com', bot: '@dur_test_bot' });
  const token = created.token;
  phase('tokens create');

  // 2. concurrent clients for LOAD_MS, then SIGKILL with requests in flight
  const factory = new BatchFactory(APP, { seed: 20_261_122, minEvents: 1, maxEvents: 20 });
  const inFlight = new InFlight();
  let killed = false;
  const load = runLoad({
    concurrency: CLIENT_LOOPS,
    keepGoing: () => !killed,
    next: () => factory.next(),
    send: (batch) =>
      inFlight.wrap(sendBody(first.url, batch.body, { token, origin: APP_ORIGIN, timeoutMs: REQUEST_TIMEOUT_MS })),
  });
  await sleep(LOAD_MS);
  const inFlightAtKill = inFlight.count;
  killed = true; // no new requests from here on; those in flight meet the kill
  const firstExit = await first.kill();
  const outcomes = await load;
  phase('load+kill');
  expect(firstExit.signal).toBe('SIGKILL');
  expect(inFlightAtKill, 'requests in flight when the process was killed').toBeGreaterThan(0);

  const acknowledged = outcomes.filter((outcome) => outcome.status === 201);
  const unacknowledged = outcomes.filter((outcome) => outcome.status !== 201);
  expect(acknowledged.length, tallyAnswers(outcomes)).toBeGreaterThan(0);
  // before the kill every request was answered 201; after it, no answer at all (never another status)
  const otherAnswers = outcomes.filter((outcome) => outcome.status !== null && outcome.status !== 201);
  expect(tallyAnswers(otherAnswers)).toBe('');
  for (const outcome of acknowledged) expect(outcome.text).toBe(SUCCESS);
  const acknowledgedSeqs = seqsOf(acknowledged);
  const sentSeqs = factory.seqCount;
  expect(new Set(seqsOf(factory.batches)).size).toBe(sentSeqs); // markers are unique

  // 3. restart on the same DATA_DIR / database (embedded: the dead owner's record is left, its lock freed by the kernel)
  if (variant.embedded)
    expect(fs.existsSync(path.join(dataDir, 'owner.lock')), 'the killed owner left its record').toBe(true);
  const second = await startServiceProcess(env);
  phase('restart');
  const shownAfterKill = await runCliJson<{ events_total: number; last_event_at: string | null }>(env, [
    'apps',
    'show',
    '--app-name',
    APP,
  ]);
  expect(shownAfterKill.events_total).toBeGreaterThanOrEqual(acknowledgedSeqs.length);
  expect(shownAfterKill.events_total).toBeLessThanOrEqual(sentSeqs);
  expect(shownAfterKill.last_event_at).not.toBeNull();
  phase('apps show');
  expect(await second.stop(), second.output()).toEqual({ code: 0, signal: null });
  phase('SIGTERM');

  // 4. directly in the store: every acknowledged event, none twice, rollups agreeing with the rows
  const afterKill = await variant.direct(dataDir, readState);
  phase('direct read');
  const lost = acknowledgedSeqs.filter((seq) => !afterKill.perSeq.has(seq));
  expect(
    lost.length,
    `acknowledged events missing after SIGKILL (of ${acknowledgedSeqs.length}): ${lost.slice(0, 20).join(',')}`,
  ).toBe(0);
  expect([...afterKill.perSeq].filter(([, n]) => n !== 1)).toEqual([]);
  expect(afterKill.rows).toBe(shownAfterKill.events_total);
  expect(afterKill.dailyCountsSum).toBe(afterKill.rows);
  expect(afterKill.activityTotal).toBe(afterKill.rows);
  // events committed whose answer was lost to the kill: the retry below must not store them again
  const committedUnanswered = seqsOf(unacknowledged).filter((seq) => afterKill.perSeq.has(seq)).length;

  // 5. the client retries every request that got no 201, with the same bodies
  const third = await startServiceProcess(env);
  phase('restart');
  const queue = [...unacknowledged];
  const retries: Outcome[] = [];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let outcome = queue.shift(); outcome; outcome = queue.shift()) {
        const answer = await sendBody(third.url, outcome.batch.body, {
          token,
          origin: APP_ORIGIN,
          timeoutMs: REQUEST_TIMEOUT_MS,
        });
        retries.push({ ...answer, batch: outcome.batch, startedAt: 0 });
      }
    }),
  );
  expect(retries).toHaveLength(unacknowledged.length);
  phase('retries');
  const retriesNotRecorded = retries.filter((retry) => retry.status !== 201 || retry.text !== SUCCESS);
  expect(tallyAnswers(retriesNotRecorded), 'retries not answered 201').toBe('');
  // on PostgreSQL the CLI reads the store itself, not through the service: an acknowledged retry shows there once
  // the service's loader stored it (a small batch waits up to half a second for its commit)
  expect(await logDrained(third), 'the retries loaded from the log into the store').toBe(true);
  const shownAfterRetry = await runCliJson<{ events_total: number }>(env, ['apps', 'show', '--app-name', APP]);
  expect(shownAfterRetry.events_total).toBe(sentSeqs);
  phase('apps show');
  expect(await third.stop(), third.output()).toEqual({ code: 0, signal: null });
  phase('SIGTERM');

  // 6. exactly once: one row per marker sent, rollups and the app total equal to the rows
  const final = await variant.direct(dataDir, readState);
  phase('direct read');
  expect(final.rows).toBe(sentSeqs);
  expect(final.perSeq.size).toBe(sentSeqs);
  expect([...final.perSeq].filter(([, n]) => n !== 1)).toEqual([]);
  expect(final.dailyCountsSum).toBe(final.rows);
  expect(final.activityTotal).toBe(final.rows);

  console.info(
    `[durability ${variant.embedded ? 'embedded' : 'PostgreSQL'}] ${outcomes.length} requests / ${sentSeqs} events sent, ` +
      `${acknowledged.length} requests / ${acknowledgedSeqs.length} events acknowledged, ${inFlightAtKill} in flight at the kill, ` +
      `${committedUnanswered} events committed but unanswered, ${unacknowledged.length} requests retried; ${phases.join(', ')}`,
  );
}

describe('SIGKILL under load, embedded store', () => {
  it('keeps every acknowledged event, takes over the stale lock, and stores retried events once', async () => {
    await killUnderLoadThenRetry({
      embedded: true,
      env: {},
      async direct(dataDir, fn) {
        // the service is stopped: open the PGlite directory the way the service does
        const store = await openStore({ dataDir });
        try {
          return await fn((text, params) => store.sql.query(text, params));
        } finally {
          await store.close();
        }
      },
    });
  });
});

describe.runIf(await available('PostgreSQL'))('SIGKILL under load, PostgreSQL', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => {
    await killAllChildren();
    await database?.drop();
  });

  it('keeps every acknowledged event and stores retried events once', async () => {
    database = await migratedDatabase();
    const url = database.url;
    await killUnderLoadThenRetry({
      embedded: false,
      env: { DATABASE_URL: url },
      async direct(_dataDir, fn) {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          return await fn(async (text, params) => (await client.query(text, params)).rows as Record<string, unknown>[]);
        } finally {
          await client.end();
        }
      },
    });
  });
});

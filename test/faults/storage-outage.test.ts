// Storage outage: while PostgreSQL cannot be reached every POST /events is still answered 201 (never
// another answer, never a hang) with memory bounded: the events wait in the node's durable log, and tokens
// cached before the outage keep authorising. Once the store is reachable again the same process stores the
// backlog by itself within seconds, without a restart, and every event that got 201 is in the database
// once. The service runs in-process with its DATABASE_URL pointed at a TCP proxy that the test cuts and
// restores; the database is checked without the proxy. Two kinds of outage: connections reset (server gone,
// port refused) and connections that stay open while nothing comes back (frozen server, partition).
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { available } from '../helpers/environment.ts';
import { APP_ORIGIN, BatchFactory, runLoad, sendBody, SUCCESS, tallyAnswers, type Outcome } from '../helpers/load.ts';
import { residentAfterGc } from '../helpers/memory.ts';
import type { TestDatabase } from '../helpers/postgres.ts';
import { migratedDatabase } from '../helpers/stores.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { startTcpProxy, throughProxy, type TcpProxy } from '../helpers/tcp-proxy.ts';

const APP = 'outage_app';
/** looked up once before the outage and not used during it */
const IDLE_APP = 'outage_idle_app';

const CLIENT_LOOPS = 16;
/** longer than the token cache's 4 s maximum age, so lookups fail during the outage too, not only loading */
const OUTAGE_MS = 5_500;
/** "never a hang": an answer later than this counts as none (the client gives up), whatever the store does */
const HANG_AFTER_MS = 30_000;
/**
 * The backlog stored once the store is back, without a restart (the loader retries at most 5 s apart): a deadline for
 * a loaded machine, not a speed check
 */
const RECOVER_DEADLINE_MS = 120_000;
/** growth of the test process's RSS after a full GC allowed while the outage load runs */
const RSS_GROWTH_LIMIT = 150 * 1024 * 1024;

/** a stalled server (connections open, nothing answered): a token lookup waits for it at most about 1 s */
const STALLED_ANSWER_WITHIN_MS = 3_000;

const postgresUp = await available('PostgreSQL');

/** waits until the service's log is empty (the store holds everything acknowledged); resolves with the ms it took */
async function backlogDrained(service: TestService, withinMs: number): Promise<number> {
  const started = performance.now();
  while (performance.now() - started < withinMs) {
    if (service.services.ingestLog!.stats().records === 0) return performance.now() - started;
    await sleep(100);
  }
  throw new Error(
    `the backlog (${service.services.ingestLog!.stats().records} requests) was not stored within ${withinMs} ms`,
  );
}

describe.runIf(postgresUp)('storage outage, PostgreSQL connections reset', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let service: TestService;
  let token: string;
  let idleToken: string;
  const events = new BatchFactory(APP, { seed: 7, minEvents: 1, maxEvents: 20 });
  const idleEvents = new BatchFactory(IDLE_APP, { seed: 8, minEvents: 1, maxEvents: 5 });
  /** events answered 201, per app */
  const acknowledged = { [APP]: [] as number[], [IDLE_APP]: [] as number[] };

  const send = (body: string, withToken = token) =>
    sendBody(service.url, body, { token: withToken, origin: APP_ORIGIN, timeoutMs: HANG_AFTER_MS });

  beforeAll(async () => {
    database = await migratedDatabase();
    proxy = await startTcpProxy({ port: Number(new URL(database.url).port || 5432) });
    service = await startTestService({ DATABASE_URL: throughProxy(database.url, proxy), RATE_LIMIT_MAX: '1000000' });
    token = await service.createApp(APP);
    idleToken = await service.createApp(IDLE_APP);
  });

  afterAll(async () => {
    proxy?.restore(); // a failed test must not leave the service unable to flush and close
    await service?.close();
    await proxy?.close();
    await database?.drop();
  });

  /** records while the store is reachable */
  async function recordWhileReachable(): Promise<void> {
    const idle = idleEvents.next();
    const idleAnswer = await send(idle.body, idleToken);
    expect(idleAnswer.status, idleAnswer.text).toBe(201);
    acknowledged[IDLE_APP].push(...idle.seqs);

    const outcomes = await runLoad({
      concurrency: 4,
      keepGoing: () => true,
      maxRequestsPerLoop: 5,
      next: () => events.next(),
      send: (batch) => send(batch.body),
    });
    expect(tallyAnswers(outcomes)).toBe(`20 × 201 ${SUCCESS}`);
    acknowledged[APP].push(...outcomes.flatMap((outcome) => outcome.batch.seqs));
  }

  /** answers 201 under load while the store is down, promptly and with bounded memory */
  async function answerWhileDown(): Promise<void> {
    const lookups = vi.spyOn(service.services.tokens, 'lookup');
    // counted, not spied on: a spy would keep every batch it was called with (megabytes each) alive
    const events = service.services.events;
    const insertBatch = events.insertBatch;
    const loadResults: string[] = [];
    events.insertBatch = (batch) =>
      insertBatch.call(events, batch).then(
        (inserted) => (loadResults.push('fulfilled'), inserted),
        (error: unknown) => {
          loadResults.push('rejected');
          throw error;
        },
      );
    proxy.cut();
    const rssBefore = residentAfterGc();
    let rssMax = rssBefore;
    const sampler = setInterval(() => (rssMax = Math.max(rssMax, residentAfterGc())), 250);

    const counts = new Map<string, number>();
    let requests = 0;
    let slowest = 0;
    const outageEvents = new BatchFactory(APP, { seed: 9, minEvents: 1, maxEvents: 20, keep: false, run: 'outage' });
    const deadline = Date.now() + OUTAGE_MS;
    const health: string[] = [];
    try {
      await Promise.all([
        runLoad({
          concurrency: CLIENT_LOOPS,
          keepGoing: () => Date.now() < deadline,
          next: () => outageEvents.next(),
          send: (batch) => send(batch.body),
          onOutcome: (outcome: Outcome) => {
            requests++;
            slowest = Math.max(slowest, outcome.ms);
            const key = outcome.status === null ? `no answer (${outcome.error})` : `${outcome.status} ${outcome.text}`;
            counts.set(key, (counts.get(key) ?? 0) + 1);
            if (outcome.status === 201) acknowledged[APP].push(...outcome.batch.seqs);
          },
        }),
        (async () => {
          while (Date.now() < deadline - 1_000) {
            const response = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(HANG_AFTER_MS) });
            health.push(`${response.status} ${((await response.json()) as { status: string }).status}`);
            await sleep(1_000);
          }
        })(),
      ]);
    } finally {
      clearInterval(sampler);
    }
    const lookupResults = lookups.mock.settledResults.map((result) => result.type);
    lookups.mockRestore();
    events.insertBatch = insertBatch;

    const summary = [...counts].map(([key, count]) => `${count} × ${key}`).join('; ');
    expect(summary).toBe(`${requests} × 201 ${SUCCESS}`);
    expect(requests, 'requests sent during the outage').toBeGreaterThan(100);
    expect(rssMax - rssBefore, `RSS grew from ${rssBefore} to ${rssMax}`).toBeLessThan(RSS_GROWTH_LIMIT);
    expect(health.length).toBeGreaterThan(0);
    expect(new Set(health)).toEqual(new Set(['200 store unavailable']));
    expect(service.services.ingestLog!.stats().records, 'requests waiting in the log').toBeGreaterThan(100);
    // the store really was out of reach for both: loading and, once the cache was past its age, token lookups
    expect(
      loadResults.filter((type) => type === 'rejected').length,
      'loads that failed during the outage',
    ).toBeGreaterThan(0);
    expect(loadResults.filter((type) => type === 'fulfilled').length, 'loads that succeeded during the outage').toBe(0);
    expect(lookupResults.filter((type) => type === 'fulfilled').length).toBeGreaterThan(0);
    console.info(
      `[storage outage] ${requests} requests in ${OUTAGE_MS} ms, slowest ${Math.round(slowest)} ms, ` +
        `RSS ${Math.round(rssBefore / 1048576)} → max ${Math.round(rssMax / 1048576)} MiB`,
    );
  }

  /** stores the backlog within seconds of the store coming back, without a restart */
  async function storeBacklogOnReturn(): Promise<void> {
    proxy.restore();
    const drainedAfter = await backlogDrained(service, RECOVER_DEADLINE_MS);

    const outcomes = await runLoad({
      concurrency: 8,
      keepGoing: () => true,
      maxRequestsPerLoop: 10,
      next: () => events.next(),
      send: (batch) => send(batch.body),
    });
    expect(tallyAnswers(outcomes)).toBe(`80 × 201 ${SUCCESS}`);
    acknowledged[APP].push(...outcomes.flatMap((outcome) => outcome.batch.seqs));

    // a token looked up before the outage (and not used during it) still authorises
    const idle = idleEvents.next();
    const idleAnswer = await send(idle.body, idleToken);
    expect(idleAnswer.status, idleAnswer.text).toBe(201);
    acknowledged[IDLE_APP].push(...idle.seqs);

    const health = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(HANG_AFTER_MS) });
    expect(health.status).toBe(200);
    expect(((await health.json()) as { status: string }).status).toBe('ok');
    await service.loaded();
    console.info(`[storage outage] backlog stored ${Math.round(drainedAfter)} ms after the store came back`);
  }

  /** has every acknowledged event in the database once, and nothing else */
  async function checkEveryEventOnce(): Promise<void> {
    const client = new pg.Client({ connectionString: database.url }); // directly, not through the proxy
    await client.connect();
    try {
      for (const app of [APP, IDLE_APP] as const) {
        const { rows } = await client.query<{ seq: number; run: string; n: number }>(
          `SELECT (e.props->'custom_data'->>'seq')::int AS seq, e.props->'custom_data'->>'run' AS run, count(*)::int AS n
           FROM events e JOIN apps a ON a.id = e.app_id WHERE a.app_name = $1 GROUP BY 1, 2`,
          [app],
        );
        expect(
          rows.filter((row) => row.n !== 1),
          `${app}: events stored more than once`,
        ).toEqual([]);
        const stored = new Set(rows.map((row) => row.seq));
        const missing = acknowledged[app].filter((seq) => !stored.has(seq));
        expect(missing, `${app}: acknowledged events missing`).toEqual([]);
        expect(rows.length).toBe(acknowledged[app].length);
        const {
          rows: [totals],
        } = await client.query<{ daily: number; total: number }>(
          `SELECT (SELECT coalesce(sum(c.events), 0)::int FROM daily_event_counts c WHERE c.app_id = a.id) AS daily,
                  (SELECT x.events_total::int FROM app_activity x WHERE x.app_id = a.id) AS total
           FROM apps a WHERE a.app_name = $1`,
          [app],
        );
        expect(totals).toEqual({ daily: rows.length, total: rows.length });
      }
    } finally {
      await client.end();
    }
  }

  // one scenario in its phases' order: each phase starts from the state the one before it left
  it('records while the store is reachable, answers 201 under load while it is down, stores the backlog once it is back, and has every acknowledged event once', async () => {
    await recordWhileReachable();
    await answerWhileDown();
    await storeBacklogOnReturn();
    await checkEveryEventOnce();
  });
});

describe.runIf(postgresUp)('storage outage, PostgreSQL stops answering (connections open, nothing comes back)', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let service: TestService;
  let token: string;
  const events = new BatchFactory(APP, { seed: 11, minEvents: 1, maxEvents: 20 });

  beforeAll(async () => {
    database = await migratedDatabase();
    proxy = await startTcpProxy({ port: Number(new URL(database.url).port || 5432) });
    service = await startTestService({ DATABASE_URL: throughProxy(database.url, proxy), RATE_LIMIT_MAX: '1000000' });
    token = await service.createApp(APP);
  });

  afterAll(async () => {
    proxy?.restore();
    await service?.close();
    await proxy?.close();
    await database?.drop();
  });

  it('answers 201 promptly while the store stalls, then stores what waited without a restart', async () => {
    const send = (body: string) =>
      sendBody(service.url, body, { token, origin: APP_ORIGIN, timeoutMs: STALLED_ANSWER_WITHIN_MS + 5_000 });
    const before = await send(events.next().body);
    expect(before.status, before.text).toBe(201);
    await service.loaded();

    proxy.cut('blackhole');
    // 16 clients, one request each, spread over 6 s: the later ones find the token cache past its age (4 s)
    const answers = await Promise.all(
      Array.from({ length: CLIENT_LOOPS }, async (_, i) => {
        await sleep(i * 400);
        return send(events.next().body);
      }),
    );
    const late = answers
      .filter((answer) => answer.ms >= STALLED_ANSWER_WITHIN_MS)
      .map((answer) => Math.round(answer.ms));
    expect(
      tallyAnswers(answers),
      `answer times (ms): ${answers.map((answer) => Math.round(answer.ms)).join(', ')}`,
    ).toBe(`${answers.length} × 201 ${SUCCESS}`);
    expect(late, `answers slower than ${STALLED_ANSWER_WITHIN_MS} ms`).toEqual([]);

    proxy.restore();
    await backlogDrained(service, RECOVER_DEADLINE_MS); // a statement stalled before the restore ends at its timeout
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const {
        rows: [stored],
      } = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM events`);
      expect(stored!.n).toBe(events.batches.flatMap((batch) => batch.seqs).length);
    } finally {
      await client.end();
    }
  });
});

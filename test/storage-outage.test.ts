// Storage outage: while PostgreSQL cannot be reached every POST /events is answered exactly
// 400 {"message":"Failed to record"} (never 201, never 5xx, never a hang) with memory bounded; once it is
// reachable again the same process records again within seconds, without a restart, and every event
// that got 201 before and after is in the database. The service runs in-process with its DATABASE_URL
// pointed at a TCP proxy that the test cuts and restores; the database is checked without the proxy.
// Two kinds of outage: connections reset (server gone, port refused) and connections that stay open while
// nothing comes back (frozen server, partition), where the answer may take up to the service's query timeout.
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { available } from './helpers/environment.ts';
import { APP_ORIGIN, BatchFactory, FAILED, runLoad, sendBody, SUCCESS, tallyAnswers, type Answer, type Outcome } from './helpers/load.ts';
import { residentAfterGc } from './helpers/memory.ts';
import { createTestDatabase, type TestDatabase } from './helpers/postgres.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { startTcpProxy, throughProxy, type TcpProxy } from './helpers/tcp-proxy.ts';

const APP = 'outage_app';
/** looked up once before the outage and not used during it */
const IDLE_APP = 'outage_idle_app';

const CLIENT_LOOPS = 16;
/** longer than the token cache's 4 s maximum age, so lookups fail during the outage too, not only commits */
const OUTAGE_MS = 5_500;
/** "never a hang": no request may take longer than this, whatever the store does */
const ANSWER_WITHIN_MS = 5_000;
/** "within a few seconds" of the store coming back */
const RECOVER_WITHIN_MS = 5_000;
/** growth of the test process's RSS after a full GC allowed while the outage load runs */
const RSS_GROWTH_LIMIT = 150 * 1024 * 1024;

/**
 * a stalled server (connections open, nothing answered): the service's own bound is its pg query timeout
 * of 12 s ("a stalled server must not hold requests forever: they get Failed to record instead")
 */
const STALLED_ANSWER_WITHIN_MS = 15_000;

const postgresUp = await available('PostgreSQL');

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

  const send = (body: string, withToken = token) => sendBody(service.url, body, { token: withToken, origin: APP_ORIGIN, timeoutMs: ANSWER_WITHIN_MS + 5_000 });

  beforeAll(async () => {
    database = await createTestDatabase();
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

  it('records while the store is reachable', async () => {
    const idle = idleEvents.next();
    const idleAnswer = await send(idle.body, idleToken);
    expect(idleAnswer.status, idleAnswer.text).toBe(201);
    acknowledged[IDLE_APP].push(...idle.seqs);

    const outcomes = await runLoad({ concurrency: 4, keepGoing: () => true, maxRequestsPerLoop: 5, next: () => events.next(), send: (batch) => send(batch.body) });
    expect(tallyAnswers(outcomes)).toBe(`20 × 201 ${SUCCESS}`);
    acknowledged[APP].push(...outcomes.flatMap((outcome) => outcome.batch.seqs));
  });

  it('answers exactly 400 "Failed to record" under load while the store is down, promptly and with bounded memory', async () => {
    const lookups = vi.spyOn(service.services.tokens, 'lookup');
    proxy.cut();
    const rssBefore = residentAfterGc();
    let rssMax = rssBefore;
    const sampler = setInterval(() => (rssMax = Math.max(rssMax, residentAfterGc())), 250);

    const counts = new Map<string, number>();
    let requests = 0;
    let slowest = 0;
    const outageEvents = new BatchFactory(APP, { seed: 9, minEvents: 1, maxEvents: 20, keep: false, run: 'outage' });
    const deadline = Date.now() + OUTAGE_MS;
    const health: number[] = [];
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
          },
        }),
        (async () => {
          while (Date.now() < deadline - 1_000) {
            const response = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
            await response.arrayBuffer();
            health.push(response.status);
            await sleep(1_000);
          }
        })(),
      ]);
    } finally {
      clearInterval(sampler);
    }
    const lookupResults = lookups.mock.settledResults.map((result) => result.type);
    lookups.mockRestore();

    const summary = [...counts].map(([key, count]) => `${count} × ${key}`).join('; ');
    expect(summary).toBe(`${requests} × 400 ${FAILED}`);
    expect(requests, 'requests sent during the outage').toBeGreaterThan(100);
    expect(slowest, 'slowest answer during the outage (ms)').toBeLessThan(ANSWER_WITHIN_MS);
    expect(rssMax - rssBefore, `RSS grew from ${rssBefore} to ${rssMax}`).toBeLessThan(RSS_GROWTH_LIMIT);
    expect(health.length).toBeGreaterThan(0);
    expect(new Set(health)).toEqual(new Set([503]));
    // both ways of failing were exercised: commits (cached token) and, once the cache expired, token lookups
    const failedLookups = lookupResults.filter((type) => type === 'rejected').length;
    expect(failedLookups, 'token lookups that failed during the outage').toBeGreaterThan(0);
    console.info(
      `[storage outage] ${requests} requests in ${OUTAGE_MS} ms, slowest ${Math.round(slowest)} ms, ` +
        `RSS ${Math.round(rssBefore / 1048576)} → max ${Math.round(rssMax / 1048576)} MiB`,
    );
  }, 30_000);

  it('records again within seconds of the store coming back, without a restart', async () => {
    proxy.restore();
    const restoredAt = performance.now();
    const whileRecovering: Answer[] = [];
    let recoveredAfter = -1;
    while (performance.now() - restoredAt < RECOVER_WITHIN_MS * 2) {
      const batch = events.next();
      const answer = await send(batch.body);
      whileRecovering.push(answer);
      if (answer.status === 201) {
        acknowledged[APP].push(...batch.seqs);
        recoveredAfter = performance.now() - restoredAt;
        break;
      }
      await sleep(100);
    }
    // before the first 201 only the outage answer, nothing else
    expect(tallyAnswers(whileRecovering.slice(0, -1).filter((answer) => answer.status !== 400 || answer.text !== FAILED))).toBe('');
    expect(recoveredAfter, tallyAnswers(whileRecovering)).toBeGreaterThanOrEqual(0);
    expect(recoveredAfter).toBeLessThan(RECOVER_WITHIN_MS);

    const outcomes = await runLoad({ concurrency: 8, keepGoing: () => true, maxRequestsPerLoop: 10, next: () => events.next(), send: (batch) => send(batch.body) });
    expect(tallyAnswers(outcomes)).toBe(`80 × 201 ${SUCCESS}`);
    acknowledged[APP].push(...outcomes.flatMap((outcome) => outcome.batch.seqs));

    // a token looked up before the outage (and not used during it) still authorises
    const idle = idleEvents.next();
    const idleAnswer = await send(idle.body, idleToken);
    expect(idleAnswer.status, idleAnswer.text).toBe(201);
    acknowledged[IDLE_APP].push(...idle.seqs);

    const health = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
    expect(health.status).toBe(200);
    await health.arrayBuffer();
    console.info(`[storage outage] first 201 ${Math.round(recoveredAfter)} ms after the store came back`);
  }, 30_000);

  it('has every acknowledged event in the database once, and none of the refused ones', async () => {
    const client = new pg.Client({ connectionString: database.url }); // directly, not through the proxy
    await client.connect();
    try {
      for (const app of [APP, IDLE_APP] as const) {
        const { rows } = await client.query<{ seq: number; run: string; n: number }>(
          `SELECT (e.props->'custom_data'->>'seq')::int AS seq, e.props->'custom_data'->>'run' AS run, count(*)::int AS n
           FROM events e JOIN apps a ON a.id = e.app_id WHERE a.app_name = $1 GROUP BY 1, 2`,
          [app],
        );
        expect(rows.filter((row) => row.run === 'outage'), `${app}: events answered "Failed to record" were stored`).toEqual([]);
        expect(rows.filter((row) => row.n !== 1), `${app}: events stored more than once`).toEqual([]);
        const stored = new Set(rows.map((row) => row.seq));
        const missing = acknowledged[app].filter((seq) => !stored.has(seq));
        expect(missing, `${app}: acknowledged events missing`).toEqual([]);
        expect(rows.length).toBe(acknowledged[app].length);
        const { rows: [totals] } = await client.query<{ daily: number; total: number }>(
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
  });
});

describe.runIf(postgresUp)('storage outage, PostgreSQL stops answering (connections open, nothing comes back)', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let service: TestService;
  let token: string;
  const events = new BatchFactory(APP, { seed: 11, minEvents: 1, maxEvents: 20 });

  beforeAll(async () => {
    database = await createTestDatabase();
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

  it('answers 400 "Failed to record" within the store timeouts, then records again without a restart', async () => {
    const send = (body: string) =>
      sendBody(service.url, body, { token, origin: APP_ORIGIN, timeoutMs: STALLED_ANSWER_WITHIN_MS + 5_000 });
    const before = await send(events.next().body);
    expect(before.status, before.text).toBe(201);

    proxy.cut('blackhole');
    // 16 clients, one request each, spread over 6 s: the later ones find the token cache expired (4 s)
    const answers = await Promise.all(
      Array.from({ length: CLIENT_LOOPS }, async (_, i) => {
        await sleep(i * 400);
        return send(events.next().body);
      }),
    );
    const late = answers.filter((answer) => answer.ms >= STALLED_ANSWER_WITHIN_MS).map((answer) => Math.round(answer.ms));
    expect(tallyAnswers(answers), `answer times (ms): ${answers.map((answer) => Math.round(answer.ms)).join(', ')}`).toBe(
      `${answers.length} × 400 ${FAILED}`,
    );
    expect(late, `answers slower than ${STALLED_ANSWER_WITHIN_MS} ms`).toEqual([]);

    proxy.restore();
    const restoredAt = performance.now();
    let recovered: Answer | undefined;
    while (!recovered && performance.now() - restoredAt < RECOVER_WITHIN_MS) {
      const answer = await send(events.next().body);
      if (answer.status === 201) recovered = answer;
      else await sleep(100);
    }
    expect(recovered?.status, `no 201 within ${RECOVER_WITHIN_MS} ms of the store coming back`).toBe(201);
  }, 60_000);
});

// The real PostgreSQL server stopped for 10 s under load. A private server (initdb in a temporary
// directory, pg_ctl on a free port) so stopping it disturbs nobody; the service is the real process
// (`node --import tsx src/main.ts`). While the server is down every request is answered exactly
// 400 {"message":"Failed to record"} (never 201, never another answer, never a hang), memory stays
// bounded, and once the server is back the same process records again within seconds. Every event
// that got 201 is stored once, and the rollups equal the raw rows.
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servicesRequired } from '../helpers/environment.ts';
import { APP_ORIGIN, BatchFactory, FAILED, runLoad, sendBody, SUCCESS, tallyAnswers, type Outcome } from '../helpers/load.ts';
import { tempDir } from '../helpers/service.ts';
import { killAllChildren, rssBytes, runCliJson, startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { createDatabase, createPrivatePostgres, postgresBinDir, type PrivatePostgres } from './private-postgres.ts';

const APP = 'pg_stop_app';
const CLIENT_LOOPS = 16;
const DOWN_MS = 10_000;
/** no answer may take longer, whatever the server does */
const ANSWER_WITHIN_MS = 5_000;
/** the first 201 after the server is back */
const RECOVER_WITHIN_MS = 10_000;
/** growth of the service's VmRSS during the outage */
const RSS_GROWTH_LIMIT = 150 * 1024 * 1024;

const binDir = postgresBinDir();
if (!binDir && servicesRequired) {
  throw new Error('PostgreSQL server binaries (initdb, pg_ctl) are required (CI=true or REQUIRE_SERVICES=1) but were not found under /usr/lib/postgresql');
}

describe.runIf(binDir !== null && process.platform === 'linux')('PostgreSQL stopped for 10 s under load', () => {
  let server: PrivatePostgres;
  let databaseUrl: string;
  let service: ServiceProcess;
  let token: string;
  const dataDir = tempDir('tma-pg-stop-');

  beforeAll(async () => {
    server = await createPrivatePostgres(binDir!);
    databaseUrl = await createDatabase(server, 'tma_stop');
    const env = { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, RATE_LIMIT_MAX: '1000000000' };
    service = await startServiceProcess(env);
    token = (await runCliJson<{ token: string }>(env, ['tokens', 'create', '--bot', '@pg_stop_bot', '--domain', 'app.example.com', '--app-name', APP])).token;
  }, 90_000);

  afterAll(async () => {
    await killAllChildren();
    await server?.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers exactly 400 "Failed to record" while it is down, memory bounded, then records again without a restart', async () => {
    const factory = new BatchFactory(APP, { seed: 15, minEvents: 1, maxEvents: 20, keep: false });
    const send = (body: string) => sendBody(service.url, body, { token, origin: APP_ORIGIN, timeoutMs: ANSWER_WITHIN_MS + 5_000 });
    const outcomes: Outcome[] = [];
    const timeline: Record<string, number> = {};
    const mark = (name: string) => (timeline[name] = performance.now());

    // load from before the stop until a while after the server is back
    let loading = true;
    const load = runLoad({
      concurrency: CLIENT_LOOPS,
      keepGoing: () => loading,
      maxRequestsPerLoop: 20_000,
      next: () => factory.next(),
      send: (batch) => send(batch.body),
      onOutcome: (outcome) => outcomes.push({ ...outcome, batch: { ...outcome.batch, body: '' } }),
    });
    const rssSamples: { at: number; rss: number }[] = [];
    const sampler = setInterval(() => rssSamples.push({ at: performance.now(), rss: rssBytes(service.pid) }), 100);
    const health: { at: number; status: number }[] = [];
    try {
      await sleep(1_500);
      mark('stopIssued');
      await server.stop('fast');
      mark('stopped');
      const downUntil = performance.now() + DOWN_MS;
      while (performance.now() < downUntil) {
        const response = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) }).catch(() => null);
        await response?.arrayBuffer();
        health.push({ at: performance.now(), status: response?.status ?? 0 });
        await sleep(1_000);
      }
      mark('startIssued');
      await server.start();
      mark('started');
      // keep the load on until the service has recorded again for a while (bounded)
      const recoverDeadline = performance.now() + RECOVER_WITHIN_MS + 5_000;
      while (performance.now() < recoverDeadline) {
        const firstAfter = outcomes.find((o) => o.status === 201 && o.startedAt >= timeline.started!);
        if (firstAfter && performance.now() - firstAfter.startedAt > 2_000) break;
        await sleep(200);
      }
    } finally {
      loading = false;
      await load;
      clearInterval(sampler);
    }

    const { stopped, startIssued, started } = timeline as Record<string, number>;
    const end = (o: Outcome) => o.startedAt + o.ms;
    const before = outcomes.filter((o) => end(o) < timeline.stopIssued!);
    const down = outcomes.filter((o) => o.startedAt >= stopped! && end(o) <= startIssued!);
    const after = outcomes.filter((o) => o.startedAt >= started!);

    // the service process itself must have survived all of it
    expect(service.running(), `the service exited:\n${service.output().slice(-3_000)}\nPostgreSQL log:\n${server.log()}`).toBe(true);

    // only two answers at all: 201 or exactly "Failed to record"; never a hang
    const other = outcomes.filter((o) => !(o.status === 201 && o.text === SUCCESS) && !(o.status === 400 && o.text === FAILED));
    expect(tallyAnswers(other)).toBe('');
    expect(Math.max(...outcomes.map((o) => o.ms)), 'slowest answer (ms)').toBeLessThan(ANSWER_WITHIN_MS);
    expect(tallyAnswers(before)).toBe(`${before.length} × 201 ${SUCCESS}`);
    expect(before.length).toBeGreaterThan(10);
    // while the server was down: never 201
    expect(tallyAnswers(down)).toBe(`${down.length} × 400 ${FAILED}`);
    expect(down.length, 'requests answered while the server was down').toBeGreaterThan(100);
    expect(health.length).toBeGreaterThan(0);
    expect(new Set(health.map((h) => h.status))).toEqual(new Set([503]));

    // back without a restart: the same process records again within seconds
    expect(service.running()).toBe(true);
    const firstAfter = after.find((o) => o.status === 201);
    expect(firstAfter, `no 201 after the server came back: ${tallyAnswers(after)}`).toBeDefined();
    const recoveredAfter = end(firstAfter!) - started!;
    expect(recoveredAfter).toBeLessThan(RECOVER_WITHIN_MS);
    const settled = after.filter((o) => o.startedAt >= end(firstAfter!) + 1_000);
    expect(tallyAnswers(settled)).toBe(`${settled.length} × 201 ${SUCCESS}`);

    // memory bounded while requests were refused
    const baseline = Math.max(...rssSamples.filter((s) => s.at < stopped!).map((s) => s.rss));
    const duringOutage = Math.max(...rssSamples.filter((s) => s.at >= stopped! && s.at <= started!).map((s) => s.rss));
    const rssTimeline = rssSamples
      .filter((_, index) => index % 10 === 0)
      .map((s) => `${((s.at - stopped!) / 1000).toFixed(0)}s:${s.rss >> 20}`)
      .join(' ');
    const perSecond = (from: number, to: number) => Math.round((outcomes.filter((o) => o.startedAt >= from && o.startedAt < to).length * 1000) / (to - from));
    const rates = `requests/s before ${perSecond(outcomes[0]!.startedAt, stopped!)}, while down ${perSecond(stopped!, startIssued!)}`;
    expect(
      duringOutage - baseline,
      `VmRSS ${baseline >> 20} MiB before, max ${duringOutage >> 20} MiB during the outage; MiB by time since the stop: ${rssTimeline}; ${rates}`,
    ).toBeLessThan(RSS_GROWTH_LIMIT);

    // every acknowledged event stored once; rollups equal the raw rows
    const acknowledged = outcomes.filter((o) => o.status === 201).flatMap((o) => o.batch.seqs);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ seq: number; n: number }>(
        `SELECT (props->'custom_data'->>'seq')::int AS seq, count(*)::int AS n FROM events GROUP BY 1`,
      );
      expect(rows.filter((row) => row.n !== 1), 'events stored more than once').toEqual([]);
      const stored = new Set(rows.map((row) => row.seq));
      expect(acknowledged.filter((seq) => !stored.has(seq)), 'acknowledged events missing').toEqual([]);
      const { rows: [sums] } = await client.query<{ raw: number; counted: number; total: number }>(
        `SELECT (SELECT count(*)::int FROM events) AS raw, (SELECT coalesce(sum(events), 0)::int FROM daily_event_counts) AS counted,
                (SELECT coalesce(sum(events_total), 0)::int FROM app_activity) AS total`,
      );
      expect(sums).toEqual({ raw: rows.length, counted: rows.length, total: rows.length });
    } finally {
      await client.end();
    }

    console.info(
      `[postgres stop] ${outcomes.length} requests: ${before.length} before, ${down.length} while down (all "Failed to record"), ` +
        `${after.length} after; stop took ${Math.round(stopped! - timeline.stopIssued!)} ms, start ${Math.round(started! - startIssued!)} ms; ` +
        `first 201 ${Math.round(recoveredAfter)} ms after the server was back; VmRSS ${baseline >> 20} → max ${duringOutage >> 20} MiB; ` +
        `${acknowledged.length} acknowledged events all stored`,
    );
  }, 75_000);
});

// The real PostgreSQL server stopped for 30 s under load. A private server (initdb in a temporary
// directory, pg_ctl on a free port) so stopping it disturbs nobody; the service is the real process
// (the build, `node dist/server/main.js`). While the server is down every request is still answered 201: the
// events wait in the node's durable log (never another answer, never a hang), /healthz says the store is
// unavailable and how much waits, memory stays bounded; once the server is back the loader catches up by
// itself. Every event that got 201 is stored once, and the rollups equal the raw rows.
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { servicesRequired } from '../helpers/environment.ts';
import { APP_ORIGIN, BatchFactory, runLoad, sendBody, SUCCESS, tallyAnswers, type Outcome } from '../helpers/load.ts';
import { tempDir } from '../helpers/service.ts';
import {
  killAllChildren,
  rssParts,
  runCliJson,
  startServiceProcess,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import { createDatabase, createPrivatePostgres, postgresBinDir, type PrivatePostgres } from './private-postgres.ts';

const APP = 'pg_stop_app';
const CLIENT_LOOPS = 16;
const DOWN_MS = 30_000;
/** an answer later than this is a hang: the client gives up and the request counts as unanswered */
const HANG_AFTER_MS = 30_000;
/**
 * The backlog stored after the server is back, while the full load goes on. Every event here is a custom event
 * with a property of unique values, the costliest kind for the insights' aggregates (bench/insights-load.ts
 * measures it as "custom-heavy"), so the loader gains on the load slowly.
 */
const DRAIN_DEADLINE_MS = 300_000;
/**
 * Growth of the service's anonymous resident memory (heap and buffers) during the outage. The file-backed part grows
 * with the log while it waits (LMDB maps its file), is bounded by LOG_MAX_BYTES and is page cache the kernel reclaims,
 * so it is reported, not bounded here.
 */
const RSS_GROWTH_LIMIT = 150 * 1024 * 1024;

const binDir = postgresBinDir();
if (!binDir && servicesRequired) {
  throw new Error(
    'PostgreSQL server binaries (initdb, pg_ctl) are required (CI=true or REQUIRE_SERVICES=1) but were not found under /usr/lib/postgresql',
  );
}

describe.runIf(binDir !== null && process.platform === 'linux')('PostgreSQL stopped for 30 s under load', () => {
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
    token = (
      await runCliJson<{ token: string }>(env, [
        'tokens',
        'create',
        '--bot',
        '@pg_stop_bot',
        '--domain',
        'app.example.com',
        '--app-name',
        APP,
      ])
    ).token;
  });

  afterAll(async () => {
    await killAllChildren();
    await server?.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 201 while it is down (the events wait in the log), memory bounded, then stores the backlog without a restart', async () => {
    const factory = new BatchFactory(APP, { seed: 15, minEvents: 1, maxEvents: 20, keep: false });
    const send = (body: string) => sendBody(service.url, body, { token, origin: APP_ORIGIN, timeoutMs: HANG_AFTER_MS });
    const outcomes: Outcome[] = [];
    const timeline: Record<string, number> = {};
    const mark = (name: string) => (timeline[name] = performance.now());
    let backlogDrained = false;

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
    const rssSamples: { at: number; anon: number; file: number }[] = [];
    const sampler = setInterval(() => rssSamples.push({ at: performance.now(), ...rssParts(service.pid) }), 100);
    type Health = { status: string; backlog: { requests: number; bytes: number; oldest_seconds: number } };
    const health: { at: number; status: number; body: Health | null }[] = [];
    const checkHealth = async () => {
      const response = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(HANG_AFTER_MS) }).catch(
        () => null,
      );
      const body = response ? ((await response.json()) as Health) : null;
      health.push({ at: performance.now(), status: response?.status ?? 0, body });
      return body;
    };
    try {
      // the load under way before the stop: many requests answered, the memory sampled under it
      await expect
        .poll(() => outcomes.length >= CLIENT_LOOPS * 10 && rssSamples.length >= 10, {
          timeout: 60_000,
          message: 'requests answered and memory sampled before the stop',
        })
        .toBe(true);
      mark('stopIssued');
      await server.stop('fast');
      mark('stopped');
      const downUntil = performance.now() + DOWN_MS;
      while (performance.now() < downUntil) {
        await checkHealth();
        await sleep(1_000);
      }
      mark('startIssued');
      await server.start();
      mark('started');
      // load stays on while the backlog drains
      const drainDeadline = performance.now() + DRAIN_DEADLINE_MS;
      while (performance.now() < drainDeadline) {
        const body = await checkHealth();
        if (body?.status === 'ok' && body.backlog.oldest_seconds < 2) {
          backlogDrained = true;
          break;
        }
        await sleep(500);
      }
      mark('drained');
    } finally {
      loading = false;
      await load;
      clearInterval(sampler);
    }
    const { stopped, startIssued, started, drained } = timeline as Record<string, number>;
    const end = (o: Outcome) => o.startedAt + o.ms;
    const before = outcomes.filter((o) => end(o) < timeline.stopIssued!);
    const down = outcomes.filter((o) => o.startedAt >= stopped! && end(o) <= startIssued!);
    const after = outcomes.filter((o) => o.startedAt >= started!);

    // the service process itself must have survived all of it
    expect(
      service.running(),
      `the service exited:\n${service.output().slice(-3_000)}\nPostgreSQL log:\n${server.log()}`,
    ).toBe(true);

    // every request answered 201, before, during and after the outage; never a hang
    expect(tallyAnswers(outcomes)).toBe(`${outcomes.length} × 201 ${SUCCESS}`);
    console.info(`[postgres stop] slowest answer ${Math.round(Math.max(...outcomes.map((o) => o.ms)))} ms`);
    expect(before.length).toBeGreaterThan(10);
    expect(down.length, 'requests answered while the server was down').toBeGreaterThan(100);
    // /healthz: the node stays in service and says the store is down and the backlog grows
    const whileDown = health.filter((h) => h.at >= stopped! && h.at <= startIssued!);
    expect(whileDown.length).toBeGreaterThan(0);
    expect(new Set(whileDown.map((h) => `${h.status} ${h.body?.status}`))).toEqual(new Set(['200 store unavailable']));
    expect(Math.max(...whileDown.map((h) => h.body!.backlog.requests))).toBeGreaterThan(100);
    // back without a restart: the loader stores the backlog by itself
    expect(service.running()).toBe(true);
    expect(
      backlogDrained,
      `the backlog drained under full load within ${DRAIN_DEADLINE_MS / 1000} s of the server's return`,
    ).toBe(true);
    console.info(`[postgres stop] backlog drained ${Math.round(drained! - started!)} ms after the server was back`);

    // memory bounded while the events waited in the log
    const inOutage = (s: { at: number }) => s.at >= stopped! && s.at <= started!;
    const baseline = Math.max(...rssSamples.filter((s) => s.at < stopped!).map((s) => s.anon));
    const duringOutage = Math.max(...rssSamples.filter(inOutage).map((s) => s.anon));
    const fileDuringOutage = Math.max(...rssSamples.filter(inOutage).map((s) => s.file));
    const rssTimeline = rssSamples
      .filter((_, index) => index % 10 === 0)
      .map((s) => `${((s.at - stopped!) / 1000).toFixed(0)}s:${s.anon >> 20}/${s.file >> 20}`)
      .join(' ');
    const perSecond = (from: number, to: number) =>
      Math.round((outcomes.filter((o) => o.startedAt >= from && o.startedAt < to).length * 1000) / (to - from));
    const rates = `requests/s before ${perSecond(outcomes[0]!.startedAt, stopped!)}, while down ${perSecond(stopped!, startIssued!)}`;
    expect(
      duringOutage - baseline,
      `anonymous RSS ${baseline >> 20} MiB before, max ${duringOutage >> 20} MiB during the outage; anonymous/file-backed MiB by time since the stop: ${rssTimeline}; ${rates}`,
    ).toBeLessThan(RSS_GROWTH_LIMIT);

    // every acknowledged event stored once (once the log is empty); rollups equal the raw rows
    const emptyBy = performance.now() + DRAIN_DEADLINE_MS;
    while ((await checkHealth())?.backlog.requests !== 0 && performance.now() < emptyBy) await sleep(200);
    const acknowledged = outcomes.filter((o) => o.status === 201).flatMap((o) => o.batch.seqs);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ seq: number; n: number }>(
        `SELECT (props->'custom_data'->>'seq')::int AS seq, count(*)::int AS n FROM events GROUP BY 1`,
      );
      expect(
        rows.filter((row) => row.n !== 1),
        'events stored more than once',
      ).toEqual([]);
      const stored = new Set(rows.map((row) => row.seq));
      expect(
        acknowledged.filter((seq) => !stored.has(seq)),
        'acknowledged events missing',
      ).toEqual([]);
      const {
        rows: [sums],
      } = await client.query<{ raw: number; counted: number; total: number }>(
        `SELECT (SELECT count(*)::int FROM events) AS raw, (SELECT coalesce(sum(events), 0)::int FROM daily_event_counts) AS counted,
                (SELECT coalesce(sum(events_total), 0)::int FROM app_activity) AS total`,
      );
      expect(sums).toEqual({ raw: rows.length, counted: rows.length, total: rows.length });
    } finally {
      await client.end();
    }

    console.info(
      `[postgres stop] ${outcomes.length} requests: ${before.length} before, ${down.length} while down, ${after.length} after, all 201; ` +
        `stop took ${Math.round(stopped! - timeline.stopIssued!)} ms, start ${Math.round(started! - startIssued!)} ms; ` +
        `backlog of ${Math.max(...whileDown.map((h) => h.body!.backlog.requests))} requests drained ${Math.round(drained! - started!)} ms after the server was back; ` +
        `anonymous RSS ${baseline >> 20} → max ${duringOutage >> 20} MiB, file-backed max ${fileDuringOutage >> 20} MiB; ${acknowledged.length} acknowledged events all stored`,
    );
  });
});

// Scale-out with real processes: two ingest services (the build, `node dist/server/main.js`) on one PostgreSQL
// and one Redis with the same SECRET, behind a "load balancer" (requests alternate or are spread; the
// client address comes in X-Forwarded-For, TRUST_PROXY=true). The rate limit is one shared budget, a
// revocation made with the operator CLI reaches both processes within 5 s, and after concurrent load on
// both (duplicates included) every rollup equals what the raw rows say.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { available, REDIS_URL } from '../helpers/environment.ts';
import { APP_ORIGIN, BatchFactory, runLoad, SUCCESS, type Answer } from '../helpers/load.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.ts';
import { tempDir } from '../helpers/service.ts';
import {
  killAllChildren,
  logDrained,
  runCli,
  runCliJson,
  startServiceProcess,
  type ServiceProcess,
} from '../helpers/service-process.ts';

const LIMIT = 40;
const INVALID = '{"message":"Token is invalid."}';
const TOO_MANY = '{"message":"Too many requests. Try again later."}';

const ready = (await available('PostgreSQL')) && (await available('Redis'));

/** POST /events as one client (X-Forwarded-For) through the load balancer to the given node */
async function post(node: ServiceProcess, body: string, token: string, client: string): Promise<Answer> {
  const started = performance.now();
  try {
    const response = await fetch(`${node.url}/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'tga-auth-token': token,
        origin: APP_ORIGIN,
        'x-forwarded-for': client,
      },
      body,
      signal: AbortSignal.timeout(15_000),
    });
    return { status: response.status, text: await response.text(), ms: performance.now() - started };
  } catch (error) {
    return { status: null, text: '', error: String(error), ms: performance.now() - started };
  }
}

const event = (appName: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    event_name: 'app-init',
    session_id: crypto.randomUUID(),
    user_id: 1_000 + Math.floor(Math.random() * 50),
    app_name: appName,
    platform: 'android',
    client_timestamp: String(Date.now()),
    ...extra,
  });

/** how long a process may take to refuse a revoked token before the test fails: a hang guard, not the promise */
const REVOCATION_DEADLINE_MS = 120_000;

describe.runIf(ready)('two ingest processes on one PostgreSQL and Redis', () => {
  let database: TestDatabase;
  let env: Record<string, string>;
  let nodes: [ServiceProcess, ServiceProcess];
  const dirs: string[] = [];
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    database = await createTestDatabase();
    // one secret for both nodes, as the operator must configure it; each node its own DATA_DIR
    env = {
      DATABASE_URL: database.url,
      REDIS_URL,
      SECRET: crypto.randomBytes(24).toString('hex'),
      RATE_LIMIT_MAX: String(LIMIT),
      RATE_LIMIT_WINDOW_MS: '60000',
      TRUST_PROXY: 'true',
    };
    const dataDir = () => {
      const dir = tempDir('tma-two-');
      dirs.push(dir);
      return dir;
    };
    // the first start migrates; the second must find the schema ready (or wait on the migration lock)
    nodes = (await Promise.all([
      startServiceProcess({ ...env, DATA_DIR: dataDir() }),
      startServiceProcess({ ...env, DATA_DIR: dataDir() }),
    ])) as [ServiceProcess, ServiceProcess];
    const created = await Promise.all(
      ['limit_two_proc', 'revoke_two_proc', 'rollup_two_proc'].map((appName) =>
        runCliJson<{ token: string; app_name: string }>({ ...env, DATA_DIR: dataDir() }, [
          'tokens',
          'create',
          '--bot',
          '@two_proc_bot',
          '--domain',
          'app.example.com',
          '--app-name',
          appName,
        ]),
      ),
    );
    for (const { token, app_name } of created) tokens[app_name] = token;
  });

  afterAll(async () => {
    await killAllChildren();
    await database?.drop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('shares one rate limit: alternating between the processes, the client gets exactly the limit', async () => {
    const client = '198.51.100.7';
    const answers: Answer[] = [];
    for (let i = 0; i < LIMIT + 4; i++)
      answers.push(await post(nodes[i % 2]!, event('limit_two_proc'), tokens.limit_two_proc!, client));
    expect(answers.map((answer) => answer.status)).toEqual([...Array(LIMIT).fill(201), 429, 429, 429, 429]);
    expect(answers.at(-1)!.text).toBe(TOO_MANY);
    // another client of the same app has its own budget, on either process
    expect((await post(nodes[1], event('limit_two_proc'), tokens.limit_two_proc!, '198.51.100.8')).status).toBe(201);
    expect((await post(nodes[0], event('limit_two_proc'), tokens.limit_two_proc!, '198.51.100.7')).status).toBe(429);
  });

  it('a revocation made with the operator CLI reaches both processes within 5 s', async () => {
    const token = tokens.revoke_two_proc!;
    // both processes have the token cached (the case a revocation must beat)
    for (const node of nodes) {
      for (let i = 0; i < 3; i++)
        expect((await post(node, event('revoke_two_proc'), token, `203.0.113.${i}`)).text).toBe(SUCCESS);
    }
    const revoked = await runCli({ ...env, DATA_DIR: tempDir('tma-two-cli-') }, [
      'tokens',
      'revoke',
      '--app-name',
      'revoke_two_proc',
    ]);
    expect(revoked.exitCode, revoked.stderr + revoked.stdout).toBe(0);
    const revokedAt = performance.now();
    // the CLI process has committed: from here each process must refuse (promised within 5 s; the figure is printed,
    // the deadline is one a loaded machine keeps)
    const reached = await Promise.all(
      nodes.map(async (node, index) => {
        let last = '';
        for (let i = 0; performance.now() - revokedAt < REVOCATION_DEADLINE_MS; i++) {
          last = (await post(node, event('revoke_two_proc'), token, `203.0.113.${50 + index * 50 + (i % 40)}`)).text;
          if (last === INVALID) return performance.now() - revokedAt;
          await sleep(100);
        }
        throw new Error(
          `process ${index} still answers ${last} ${REVOCATION_DEADLINE_MS / 1000} s after the revocation`,
        );
      }),
    );
    console.info(
      `[two processes] revocation reached them after ${reached.map((ms) => Math.round(ms)).join(' and ')} ms`,
    );
  });

  it('each with its own durable log: after concurrent load on both, duplicates included, every event stored once and every rollup equal to the raw rows', async () => {
    const appName = 'rollup_two_proc';
    const token = tokens.rollup_two_proc!;
    const factory = new BatchFactory(appName, { seed: 4242, minEvents: 1, maxEvents: 20 });
    const deadline = Date.now() + 3_000;
    let client = 0;
    const acknowledged = new Set<number>();
    const statuses = new Map<string, number>();
    await runLoad({
      concurrency: 12,
      keepGoing: () => Date.now() < deadline,
      maxRequestsPerLoop: 2_000,
      next: () => factory.next(),
      // every batch goes to both processes at once (a retry through another node), each as a new client
      send: async (batch) => {
        const ip = `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client++ & 255}`;
        const [a, b] = await Promise.all([
          post(nodes[0], batch.body, token, ip),
          post(nodes[1], batch.body, token, ip),
        ]);
        if (a.status === 201 || b.status === 201) batch.seqs.forEach((seq) => acknowledged.add(seq));
        for (const answer of [a, b]) statuses.set(`${answer.status}`, (statuses.get(`${answer.status}`) ?? 0) + 1);
        return a;
      },
    });
    expect([...statuses.keys()], JSON.stringify([...statuses])).toEqual(['201']);
    expect(acknowledged.size).toBeGreaterThan(100);
    // both loaders have stored their logs
    expect(await Promise.all(nodes.map((node) => logDrained(node)))).toEqual([true, true]);

    const client2 = new pg.Client({ connectionString: database.url });
    await client2.connect();
    try {
      const q = async (text: string) => (await client2.query(text, [appName])).rows[0] as Record<string, number>;
      const raw = await q(
        `SELECT count(*)::int AS events, count(DISTINCT (props->'custom_data'->>'seq'))::int AS seqs,
                count(DISTINCT (e.day, e.user_key))::int AS user_days, count(DISTINCT e.session_id)::int AS sessions
         FROM events e JOIN apps a ON a.id = e.app_id WHERE a.app_name = $1`,
      );
      const rollups = await q(
        `SELECT (SELECT coalesce(sum(events), 0)::int FROM daily_event_counts WHERE app_id = a.id) AS events,
                (SELECT events_total::int FROM app_activity WHERE app_id = a.id) AS activity,
                (SELECT count(*)::int FROM daily_users WHERE app_id = a.id) AS daily_users,
                (SELECT count(*)::int FROM daily_sessions WHERE app_id = a.id) AS daily_sessions,
                (SELECT coalesce(sum(users), 0)::int FROM daily_app_stats WHERE app_id = a.id) AS stats_users,
                (SELECT coalesce(sum(sessions), 0)::int FROM daily_app_stats WHERE app_id = a.id) AS stats_sessions,
                (SELECT coalesce(sum(sessions), 0)::int FROM daily_dimensions WHERE app_id = a.id AND dimension = 'platform') AS platform_sessions
         FROM apps a WHERE a.app_name = $1`,
      );
      // every acknowledged event stored exactly once (each batch was sent twice)
      expect(raw.events).toBe(acknowledged.size);
      expect(raw.seqs).toBe(acknowledged.size);
      expect(rollups).toEqual({
        events: raw.events,
        activity: raw.events,
        daily_users: raw.user_days,
        daily_sessions: raw.sessions,
        stats_users: raw.user_days,
        stats_sessions: raw.sessions,
        platform_sessions: raw.sessions,
      });
      console.info(
        `[two processes] ${raw.events} events from ${statuses.get('201')} answers (every batch sent to both), rollups equal`,
      );
    } finally {
      await client2.end();
    }
  });
});

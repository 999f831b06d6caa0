// kill -9 while the loader is in the middle of a batch, on PostgreSQL, with the real service process. A row lock
// taken by the test holds the loader's statement after it has inserted the batch's events and before it ends;
// then the service is killed. Either the statement is aborted (its backend terminated: nothing of the batch is
// stored, the restarted service loads it again) or it commits after its client died (the store holds the batch
// and the log's offset, the log never heard: the restarted service must not load it twice). Both ways, every
// event that got 201 is stored exactly once and the rollups equal the raw rows.
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { available } from '../helpers/environment.ts';
import { APP_ORIGIN, BatchFactory, sendBody, SUCCESS } from '../helpers/load.ts';
import type { TestDatabase } from '../helpers/postgres.ts';
import { migratedDatabase } from '../helpers/stores.ts';
import { tempDir } from '../helpers/service.ts';
import {
  killAllChildren,
  logDrained,
  runCliJson,
  startServiceProcess,
  type ServiceProcess,
} from '../helpers/service-process.ts';

const ready = await available('PostgreSQL');

describe.runIf(ready)('kill -9 with the loader in the middle of a batch (PostgreSQL)', () => {
  let database: TestDatabase;
  let client: pg.Client;
  const dirs: string[] = [];

  beforeAll(async () => {
    database = await migratedDatabase();
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });

  afterAll(async () => {
    await killAllChildren();
    await client?.end();
    await database?.drop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  async function scenario(appName: string, afterKill: (blockedPid: number, holder: pg.Client) => Promise<void>) {
    const dataDir = tempDir('tma-loader-kill-');
    dirs.push(dataDir);
    // both scenarios share the database, so the nodes share its secret
    const env = {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      SECRET: 'loader-kill-test-secret-'.padEnd(48, 'x'),
      RATE_LIMIT_MAX: '1000000000',
    };
    let service: ServiceProcess = await startServiceProcess(env);
    const { token } = await runCliJson<{ token: string }>(env, [
      'tokens',
      'create',
      '--bot',
      '@loader_kill_bot',
      '--domain',
      'app.example.com',
      '--app-name',
      appName,
    ]);
    const factory = new BatchFactory(appName, { seed: 7, minEvents: 5, maxEvents: 5 });
    const acknowledged: number[] = [];
    const send = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const batch = factory.next();
        const answer = await sendBody(service.url, batch.body, { token, origin: APP_ORIGIN, timeoutMs: 10_000 });
        expect(answer.text).toBe(SUCCESS);
        acknowledged.push(...batch.seqs);
      }
    };

    // stored and loaded: the app's activity row exists
    await send(20);
    expect(await logDrained(service)).toBe(true);

    // the test holds the app's activity row: the loader's next statement inserts its events, then waits for it
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(
      `SELECT 1 FROM app_activity a JOIN apps ON apps.id = a.app_id WHERE apps.app_name = $1 FOR UPDATE OF a`,
      [appName],
    );
    await send(30);
    let blockedPid: number | undefined;
    for (let i = 0; i < 100 && blockedPid === undefined; i++) {
      const { rows } = await client.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%INSERT INTO events%'`,
      );
      blockedPid = rows[0]?.pid;
      if (blockedPid === undefined) await sleep(100);
    }
    expect(blockedPid, 'the loader statement waiting on the held row').toBeDefined();

    await service.kill();
    await afterKill(blockedPid!, holder);
    await holder.end();
    // the old backend has finished, one way or the other
    for (let i = 0; i < 100; i++) {
      const { rows } = await client.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'`, [
        blockedPid,
      ]);
      if (rows.length === 0) break;
      await sleep(100);
    }

    service = await startServiceProcess(env);
    await send(10);
    expect(await logDrained(service)).toBe(true);
    await service.stop();

    const { rows } = await client.query<{ seq: number; n: number }>(
      `SELECT (e.props->'custom_data'->>'seq')::int AS seq, count(*)::int AS n FROM events e JOIN apps a ON a.id = e.app_id
       WHERE a.app_name = $1 GROUP BY 1`,
      [appName],
    );
    expect(
      rows.filter((row) => row.n !== 1),
      'events stored more than once',
    ).toEqual([]);
    expect(rows.map((row) => row.seq).sort((a, b) => a - b)).toEqual([...acknowledged].sort((a, b) => a - b));
    const {
      rows: [sums],
    } = await client.query<{ counted: number; total: number; usage: number }>(
      `SELECT (SELECT sum(events)::int FROM daily_event_counts c WHERE c.app_id = a.id) AS counted,
              (SELECT events_total::int FROM app_activity t WHERE t.app_id = a.id) AS total,
              (SELECT sum(events)::int FROM daily_app_usage u WHERE u.app_id = a.id) AS usage
       FROM apps a WHERE a.app_name = $1`,
      [appName],
    );
    // the quota's usage counts what was loaded, so a batch loaded twice would show there too
    expect(sums).toEqual({ counted: acknowledged.length, total: acknowledged.length, usage: acknowledged.length });
  }

  it('the statement aborted: the restarted service loads the batch again, once', async () => {
    await scenario('loader_kill_abort', async (blockedPid, holder) => {
      await client.query('SELECT pg_terminate_backend($1)', [blockedPid]);
      await holder.query('ROLLBACK');
    });
  });

  it('the statement committed after the service died: the restarted service does not load the batch twice', async () => {
    await scenario('loader_kill_commit', async (_blockedPid, holder) => {
      await holder.query('ROLLBACK');
    });
  });
});

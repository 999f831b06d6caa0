// The loader behind the durable log, on its project's store: requests appended to a node's log are stored with their
// rollups exactly once, the node's offset is written in the same statement (a restart after a commit whose
// release was lost stores nothing twice), a record the store refuses is dropped alone, and a store that
// fails is retried until it answers again.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/db/store.ts';
import { IngestLog, type IngestLogOptions } from '../../../src/events/write/ingest-log.ts';
import { InsightsReader } from '../../../src/events/read/insights.ts';
import { batchOf, decodeRequest, encodeRequest } from '../../../src/events/write/log-record.ts';
import {
  SqlEventPlane,
  type EventBatch,
  type EventRow,
  type EventPlane,
} from '../../../src/events/write/event-plane.ts';
import { STORE_BACKEND } from '../../helpers/stores.ts';
import { tempDir } from '../../helpers/service.ts';
import { NUMBERED_DAY as DAY, numberedRow as row } from '../../helpers/events.ts';

/** an event plane that refuses its next `failures` batches as an unreachable store does */
class FlakyStore implements EventPlane {
  failures = 0;
  attempts = 0;
  constructor(private readonly inner: EventPlane) {}
  insert(rows: EventRow[]) {
    return this.inner.insert(rows);
  }
  async insertBatch(batch: EventBatch) {
    this.attempts++;
    if (this.failures > 0) {
      this.failures--;
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    }
    return this.inner.insertBatch(batch);
  }
  loadedThrough(node: string) {
    return this.inner.loadedThrough(node);
  }
  activities(appIds: readonly number[]) {
    return this.inner.activities(appIds);
  }
  addRejections(rows: Parameters<EventPlane['addRejections']>[0]) {
    return this.inner.addRejections(rows);
  }
  recentRejections(appId: number, limit: number) {
    return this.inner.recentRejections(appId, limit);
  }
  lastRejections(appIds: readonly number[]) {
    return this.inner.lastRejections(appIds);
  }
}

describe(`loader, ${STORE_BACKEND.name}`, () => {
  // one store per backend: each test loads into an app and a log (a node of its own) of its own, so none sees
  // another's rows or offsets, and the copy of a store is not paid per test
  let opened: { store: Store; cleanup: () => Promise<void> } | undefined;
  const logs: IngestLog[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    opened = await STORE_BACKEND.open();
  });
  afterEach(async () => {
    for (const log of logs.splice(0)) await log.close(1_000).catch(() => undefined);
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });
  afterAll(() => opened?.cleanup());

  async function setUp() {
    const { store } = opened!;
    const app = await store.prisma.app.create({
      data: {
        appName: `loader_${crypto.randomUUID().slice(0, 8)}`,
        bot: '@loader_test_bot',
        domains: ['a.example.com'],
      },
    });
    const dataDir = tempDir('tma-loader-');
    dirs.push(dataDir);
    return { store, appId: app.id, dataDir, events: new SqlEventPlane(store.sql) };
  }

  async function openLog(
    dataDir: string,
    events: EventPlane,
    errors: string[] = [],
    options: Partial<IngestLogOptions> = {},
  ) {
    const log = await IngestLog.open(dataDir, events, {
      maxBytes: 64 * 1024 ** 2,
      minFreeBytes: 0,
      maxBatchBytes: 64 * 1024,
      onError: (_error, what) => errors.push(what),
      ...options,
    });
    logs.push(log);
    return log;
  }

  const counts = async (store: Store, appId: number) => {
    const [result] = await store.sql.query<{ rows: number; counted: number; total: number; usage: number }>(
      `SELECT (SELECT count(*) FROM events WHERE app_id = $1)::int AS rows,
                (SELECT coalesce(sum(events), 0) FROM daily_event_counts WHERE app_id = $1)::int AS counted,
                (SELECT coalesce(sum(events_total), 0) FROM app_activity WHERE app_id = $1)::int AS total,
                (SELECT coalesce(sum(events), 0) FROM daily_app_usage WHERE app_id = $1)::int AS usage`,
      [appId],
    );
    return result!;
  };

  it('stores appended requests with their rollups once, records the offset and empties the log', async () => {
    const { store, appId, dataDir, events } = await setUp();
    const log = await openLog(dataDir, events);
    let seq = 0;
    // more than one batch's worth (64 KiB), appended concurrently like requests
    await Promise.all(
      Array.from({ length: 200 }, () =>
        log.append(
          Array.from({ length: 5 }, () => row(appId, seq++)),
          500,
        ),
      ),
    );
    expect(await log.loader.caughtUp(120_000), 'the loader caught up with the log within 120 s').toBe(true);
    expect(await counts(store, appId)).toEqual({ rows: 1000, counted: 1000, total: 1000, usage: 1000 });
    expect(log.stats().records).toBe(0);
    expect(await events.loadedThrough(log.node)).toBe(log.stats().lastSeq);
  });

  it('loads a record written before the log kept funnel postings and a summary with those of its rows', async () => {
    const { store, appId, events } = await setUp();
    const userKey = Buffer.alloc(16, 7);
    const at = (second: number) => new Date(`${DAY}T12:00:0${second}Z`);
    const rows = [
      row(appId, 1, { eventName: 'app-init', occurredAt: at(1), userKey }),
      row(appId, 2, { occurredAt: at(2), userKey, props: { custom_data: { name: 'buy' } } }),
    ];
    const current = decodeRequest(encodeRequest(rows, 200));
    // the same request as a log written before postings kept it: four numbers in the header, then the rows
    const old = decodeRequest(
      Buffer.concat([Buffer.from(`${appId} ${rows[0]!.receivedAt.getTime()} 2 200\n`), current.rows]),
    );
    expect(old.sections.size).toBe(0);
    expect(batchOf([old]).gathered).toEqual(batchOf([current]).gathered);
    await events.insertBatch(batchOf([old]));
    const funnel = await new InsightsReader(store.sql).funnel(
      appId,
      { from: DAY, to: DAY },
      { steps: ['app-init', 'buy'], by: 'user', windowMs: 60_000 },
    );
    expect(funnel.steps.map((step) => step.count)).toEqual([1, 1]);
  });

  it('under a stream of requests commits at most once per interval, and a reader waiting for its writes cuts the wait short', async () => {
    const { store, appId, dataDir, events } = await setUp();
    const commits: number[] = [];
    // an interval far longer than the reader's wait below: only the reader can have cut it short, however slow the machine
    const log = await openLog(dataDir, events, [], {
      minCommitIntervalMs: 600_000,
      onCommit: (commit) => commits.push(commit.records),
    });
    // the first request of a quiet log is stored at once
    await log.append([row(appId, 0)], 100);
    await expect
      .poll(() => commits, {
        timeout: 30_000,
        message: 'the first request committed without waiting for the interval',
      })
      .toEqual([1]);
    // those right after it wait for the interval, together
    for (let seq = 1; seq <= 30; seq++) await log.append([row(appId, seq)], 100);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(commits).toEqual([1]);
    expect(await log.loader.caughtUp(120_000), 'the loader caught up with the log within 120 s').toBe(true);
    expect(commits).toEqual([1, 30]);
    expect(await counts(store, appId)).toMatchObject({ rows: 31, counted: 31 });
  });

  it('lets a small batch wait longer for its commit, and commits it at the usual pace once it has grown', async () => {
    const { store, appId, dataDir, events } = await setUp();
    const commits: number[] = [];
    // a small batch's wait far longer than the test: only its growth can end it, however slow the machine
    const log = await openLog(dataDir, events, [], {
      minCommitIntervalMs: 50,
      smallBatch: { bytes: 8 * 1024, waitMs: 600_000 },
      onCommit: (commit) => commits.push(commit.records),
    });
    const stored = async (count: number) => {
      for (let i = 0; i < 3_000 && commits.length < count; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    };
    await log.append([row(appId, 0)], 100);
    await stored(1);
    expect(commits).toEqual([1]);
    // a few requests, well under the small batch's size: they wait
    for (let seq = 1; seq <= 3; seq++) await log.append([row(appId, seq)], 100);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(commits).toEqual([1]);
    // grown past its size, the batch is committed
    let seq = 4;
    while (log.stats().bytes < 8 * 1024) await log.append([row(appId, seq++)], 100);
    await stored(2);
    expect(commits).toEqual([1, seq - 1]);
    expect(await counts(store, appId)).toMatchObject({ rows: seq, counted: seq });
  });

  it('stores every character of the events exactly: quotes, backslashes, and text of several bytes per character', async () => {
    const { store, appId, dataDir, events } = await setUp();
    const log = await openLog(dataDir, events);
    const texts = [
      `it's "quoted"`,
      'back\\slash \\\\ and \\u0041',
      'Привет, мир',
      'ünïcødé 🎉👩‍👩‍👧',
      '中文 テキスト',
      "E'' '' \\'",
      '\t tab and\nnewline',
    ];
    await Promise.all(
      texts.map((text, i) =>
        log.append([row(appId, i, { props: { custom_data: { seq: i, text } }, startParam: text })], 100),
      ),
    );
    expect(await log.loader.caughtUp(120_000), 'the loader caught up with the log within 120 s').toBe(true);
    const stored = await store.sql.query<{ text: string; start_param: string }>(
      `SELECT props->'custom_data'->>'text' AS text, start_param FROM events WHERE app_id = $1 ORDER BY (props->'custom_data'->>'seq')::int`,
      [appId],
    );
    expect(stored).toEqual(texts.map((text) => ({ text, start_param: text })));
  });

  it('after a restart stores nothing twice: what the store holds is released from the log at open', async () => {
    const { store, appId, dataDir, events } = await setUp();
    const flaky = new FlakyStore(events);
    flaky.failures = 1_000_000; // the store does not answer: both requests wait in the log
    const first = await openLog(dataDir, flaky);
    const rows = [[row(appId, 1), row(appId, 2)], [row(appId, 3)]];
    await first.append(rows[0]!, 200);
    const firstSeq = first.stats().lastSeq;
    await first.append(rows[1]!, 100);
    await first.close(0);
    logs.splice(logs.indexOf(first), 1);
    // the loader's commit of the first request went through, and the process died before the log heard of it
    await events.insertBatch(
      batchOf([decodeRequest(encodeRequest(rows[0]!, 200))], { node: first.node, through: firstSeq }),
    );

    const second = await openLog(dataDir, events);
    expect(second.node).toBe(first.node);
    expect(await second.loader.caughtUp(120_000), 'the loader caught up with the log within 120 s').toBe(true);
    // the usage counts every event of a request loaded (duplicates too): 3, not 5, so nothing was loaded twice
    expect(await counts(store, appId)).toEqual({ rows: 3, counted: 3, total: 3, usage: 3 });
  });

  it('counts the events waiting while the store fails, across a restart, and none once loaded', async () => {
    const { appId, dataDir, events } = await setUp();
    const flaky = new FlakyStore(events);
    flaky.failures = 1_000_000;
    const first = await openLog(dataDir, flaky);
    await first.append([row(appId, 1), row(appId, 2)], 200);
    await first.append([row(appId, 3), row(appId, 4), row(appId, 5)], 300);
    expect(first.stats()).toMatchObject({ records: 2, events: 5, bytes: expect.any(Number) });
    await first.close(0);
    logs.splice(logs.indexOf(first), 1);
    const second = await openLog(dataDir, flaky);
    expect(second.stats()).toMatchObject({ records: 2, events: 5 });
    flaky.failures = 0;
    expect(await second.loader.caughtUp(120_000), 'the loader caught up with the log within 120 s').toBe(true);
    expect(second.stats()).toMatchObject({ records: 0, events: 0 });
  });

  it('retries while the store fails and catches up once it answers', async () => {
    const { store, appId, dataDir, events } = await setUp();
    const flaky = new FlakyStore(events);
    flaky.failures = 3;
    const errors: string[] = [];
    const log = await openLog(dataDir, flaky, errors);
    await log.append([row(appId, 1)], 100);
    await log.append([row(appId, 2)], 100);
    expect(await log.loader.caughtUp(120_000), 'the loader caught up with the log within 120 s').toBe(true);
    expect(flaky.attempts).toBeGreaterThanOrEqual(4);
    expect(errors.filter((what) => what.startsWith('loading the log failed'))).toHaveLength(3);
    expect(await counts(store, appId)).toEqual({ rows: 2, counted: 2, total: 2, usage: 2 });
  });

  it('drops only a record the store refuses, stores the others and goes on', async () => {
    const { store, appId, dataDir, events } = await setUp();
    const errors: string[] = [];
    const log = await openLog(dataDir, events, errors);
    // a session id that is not a UUID gets past nothing but a hand-made row: the statement refuses it
    await Promise.all([
      log.append([row(appId, 1)], 100),
      log.append([row(appId, 2, { sessionId: 'not-a-uuid' })], 100),
      log.append([row(appId, 3)], 100),
    ]);
    await log.append([row(appId, 4)], 100);
    expect(await log.loader.caughtUp(120_000), 'the loader caught up with the log within 120 s').toBe(true);
    expect(errors.filter((what) => / cannot be stored; its 1 events are dropped$/.test(what))).toHaveLength(1);
    expect(await counts(store, appId)).toMatchObject({ rows: 3, counted: 3, total: 3 });
    expect(log.stats().records).toBe(0);
  });
});

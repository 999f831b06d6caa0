// The real service (embedded store) with DATA_DIR on a small tmpfs that something else fills up under load: requests
// get "Failed to record", /healthz answers 503 "disk full" at once; once space returns the node takes events again
// and the backlog drains without a restart; SIGTERM while the disk is full still stops it in time; every
// acknowledged event is stored exactly once.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/db/store.ts';
import {
  APP_ORIGIN,
  BatchFactory,
  FAILED,
  runLoad,
  sendBody,
  SUCCESS,
  tallyAnswers,
  type Outcome,
} from '../helpers/load.ts';
import { killAllChildren, runCliJson, startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { mountTmpfs } from '../helpers/tmpfs.ts';

const APP = 'full_disk_app';
const CLIENT_LOOPS = 4;
/** the store's cluster, the free space the log keeps for the store's WAL (up to 144 MB), and room to ingest */
const disk = mountTmpfs(320, 'tma-full-disk-');

afterAll(async () => {
  await killAllChildren();
  disk?.unmount();
});

interface Health {
  ms: number;
  status: number;
  body: { status: string; reason?: string; backlog: { requests: number } };
}

async function health(service: ServiceProcess): Promise<Health> {
  const started = performance.now();
  const response = await fetch(`${service.url}/healthz`, { signal: AbortSignal.timeout(10_000) });
  return { ms: performance.now() - started, status: response.status, body: (await response.json()) as Health['body'] };
}

/** polls /healthz until `done` holds (every answer kept), failing after timeoutMs */
async function waitForHealth(service: ServiceProcess, done: (h: Health) => boolean, timeoutMs: number) {
  const seen: Health[] = [];
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    const h = await health(service);
    seen.push(h);
    if (done(h)) return seen;
    await sleep(200);
  }
  throw new Error(`/healthz never got there; last: ${JSON.stringify(seen.at(-1))}\n${service.output()}`);
}

describe.runIf(disk)('a full disk under the embedded store, under load', () => {
  it('refuses with "Failed to record" and 503, recovers without a restart, stops in time, loses nothing', async () => {
    const dataDir = path.join(disk!.dir, 'data');
    const env = { DATA_DIR: dataDir, RATE_LIMIT_MAX: '1000000000', LOG_MIN_FREE_BYTES: String(4 * 1024 ** 2) };
    let service = await startServiceProcess(env);
    const { token } = await runCliJson<{ token: string }>(env, [
      'tokens',
      'create',
      '--bot',
      '@full_disk_bot',
      '--domain',
      'app.example.com',
      '--app-name',
      APP,
    ]);
    const factory = new BatchFactory(APP, { seed: 33, minEvents: 1, maxEvents: 20 });
    const filler = path.join(disk!.dir, 'filler');
    /** every answer so far, of both rounds of load */
    const outcomes: Outcome[] = [];
    const load = (target: ServiceProcess, keepGoing: () => boolean) =>
      runLoad({
        concurrency: CLIENT_LOOPS,
        keepGoing,
        next: () => factory.next(),
        send: (batch) => sendBody(target.url, batch.body, { token, origin: APP_ORIGIN, timeoutMs: 10_000 }),
        onOutcome: (outcome) => outcomes.push(outcome),
      });
    const acknowledgedSince = (index: number) => outcomes.slice(index).filter((o) => o.status === 201).length;
    /** answered 201 after the last refusal */
    const takenAgain = () => {
      const lastRefused = Math.max(...outcomes.filter((o) => o.text === FAILED).map((o) => o.startedAt));
      return outcomes.filter((o) => o.startedAt > lastRefused && o.status === 201).length;
    };

    // 1. under load, something else fills the disk
    let loading = true;
    const first = load(service, () => loading);
    await expect
      .poll(() => acknowledgedSince(0), { timeout: 60_000, message: 'events acknowledged before the disk fills' })
      .toBeGreaterThanOrEqual(CLIENT_LOOPS * 5);
    disk!.fill('filler');
    const whileFull = await waitForHealth(service, (h) => h.status === 503, 60_000);
    expect(whileFull.at(-1)!.body).toMatchObject({ status: 'disk full', reason: expect.any(String) });
    // nothing to wait for: a second later, the disk still full, it still says so
    await sleep(1_000);
    expect((await health(service)).status).toBe(503);

    // 2. space returns: no restart, the node takes events again and stores the backlog
    fs.rmSync(filler);
    await expect
      .poll(takenAgain, { timeout: 60_000, message: 'events acknowledged again once space returned' })
      .toBeGreaterThanOrEqual(CLIENT_LOOPS * 5);
    loading = false;
    await first;
    const drained = await waitForHealth(
      service,
      (h) => h.status === 200 && h.body.status === 'ok' && h.body.backlog.requests === 0,
      30_000,
    );
    const answers = [...whileFull, ...drained];
    console.info(
      `[disk full] slowest /healthz answer while full and draining: ${Math.round(Math.max(...answers.map((h) => h.ms)))} ms`,
    );
    expect(tallyAnswers(outcomes.filter((o) => o.text !== SUCCESS && o.text !== FAILED))).toBe('');
    expect(outcomes.some((o) => o.status === 400 && o.text === FAILED)).toBe(true);
    const lastRefused = Math.max(...outcomes.filter((o) => o.text === FAILED).map((o) => o.startedAt));
    expect(outcomes.filter((o) => o.startedAt > lastRefused && o.status === 201).length, 'taken again').toBeGreaterThan(
      0,
    );
    // the refusals are said a line a minute per cause, with how many there were, not a line per request
    const refusedLines = service
      .output()
      .split('\n')
      .filter((line) => line.includes('events not recorded'));
    const refusals = outcomes.filter((o) => o.text === FAILED).length;
    console.info(`[disk full] ${refusals} requests refused, ${refusedLines.length} log lines about them`);
    expect(refusedLines.length).toBeGreaterThan(0);
    expect(refusedLines.length).toBeLessThanOrEqual(6);
    expect(refusedLines.length).toBeLessThan(refusals);

    // 3. SIGTERM while the disk is full stops the process in time
    loading = true;
    const secondFrom = outcomes.length;
    const second = load(service, () => loading);
    await expect
      .poll(() => acknowledgedSince(secondFrom), {
        timeout: 60_000,
        message: 'events acknowledged before the disk fills again',
      })
      .toBeGreaterThanOrEqual(CLIENT_LOOPS);
    disk!.fill('filler');
    await waitForHealth(service, (h) => h.status === 503, 60_000);
    const signalled = performance.now();
    const exit = await service.stop(30_000);
    loading = false;
    await second;
    // it stopped by itself (the SIGKILL after 30 s was not needed); how soon is printed
    expect(exit.signal, service.output()).toBeNull();
    console.info(`[disk full] stopped ${Math.round(performance.now() - signalled)} ms after SIGTERM`);

    // 4. every acknowledged event stored exactly once (what waited in the log is loaded at the next start)
    fs.rmSync(filler);
    service = await startServiceProcess(env);
    await waitForHealth(service, (h) => h.body.status === 'ok' && h.body.backlog.requests === 0, 120_000);
    expect(await service.stop()).toEqual({ code: 0, signal: null });
    const store = await openStore({ dataDir });
    try {
      const rows = await store.sql.query<{ seq: number; n: number }>(
        `SELECT (props->'custom_data'->>'seq')::int AS seq, count(*)::int AS n FROM events GROUP BY 1`,
      );
      const stored = new Map(rows.map((row) => [row.seq, row.n]));
      const acknowledged = outcomes.filter((o) => o.status === 201).flatMap((o) => o.batch.seqs);
      expect(acknowledged.length).toBeGreaterThan(0);
      expect(
        acknowledged.filter((seq) => !stored.has(seq)),
        'acknowledged but not stored',
      ).toEqual([]);
      expect(
        [...stored].filter(([, n]) => n !== 1),
        'stored more than once',
      ).toEqual([]);
    } finally {
      await store.close();
    }
  });
});

// Under a backlog the loader makes its next batch while the store takes the one before, so the store starts on it
// as soon as it is done; with no full batch waiting, or while a failed store is probed, it makes none ahead.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { IngestLog } from '../../../src/events/write/ingest-log.ts';
import * as logRecord from '../../../src/events/write/log-record.ts';
import type { EventBatch, EventPlane } from '../../../src/events/write/event-plane.ts';
import { eventRow } from '../../helpers/events.ts';
import { tempDir } from '../../helpers/service.ts';

vi.mock('../../../src/events/write/log-record.ts', async (original) => {
  const module = await original<typeof logRecord>();
  return { ...module, batchOf: vi.fn(module.batchOf) };
});

const batchesMade = () => vi.mocked(logRecord.batchOf).mock.calls.length;

/** a store that holds each batch until the test lets it go, and can refuse batches as a store that is down */
class HeldStore implements EventPlane {
  readonly taken: EventBatch[] = [];
  private release: (() => void)[] = [];
  down = false;
  /** false: takes every batch at once (a test's end) */
  holds = true;
  insert(): Promise<number> {
    throw new Error('not used');
  }
  insertBatch(batch: EventBatch): Promise<number> {
    this.taken.push(batch);
    if (this.down)
      return Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    if (!this.holds) return Promise.resolve(0);
    return new Promise((resolve) => this.release.push(() => resolve(0)));
  }
  letGo(): void {
    for (const release of this.release.splice(0)) release();
  }
  async loadedThrough() {
    return 0;
  }
  async activities() {
    return new Map();
  }
  async addRejections() {}
  async recentRejections() {
    return [];
  }
  async lastRejections() {
    return new Map();
  }
}

const opened: { log: IngestLog; store: HeldStore }[] = [];
afterEach(async () => {
  for (const { log, store } of opened.splice(0)) {
    Object.assign(store, { holds: false, down: false }).letGo();
    await log.close(0);
  }
  vi.mocked(logRecord.batchOf).mockClear();
});

/**
 * a loader over a held store (or one that is down), with `requests` requests of 20 events appended (batches of about
 * 16 requests) while the store holds the loader's first batch
 */
async function backlog(requests: number, down = false, rows = () => Array.from({ length: 20 }, () => eventRow(1))) {
  const store = new HeldStore();
  store.down = down;
  const log = await IngestLog.open(tempDir('tma-pipeline-'), store, {
    maxBytes: 64 * 1024 ** 2,
    minFreeBytes: 0,
    maxBatchBytes: BATCH_BYTES,
  });
  opened.push({ log, store });
  for (let n = 0; n < requests; n++) await log.append(rows(), 2_000);
  return { store, log };
}

const BATCH_BYTES = 16 * 1024;

/** lets the loader run what it has to do now (its I/O turns included) */
const settle = async () => {
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
};

describe('the loader under a backlog', () => {
  it('makes the next batch while the store takes one, and hands it over as soon as the store is done', async () => {
    const { store } = await backlog(80);
    expect(store.taken).toHaveLength(1);
    store.letGo();
    await vi.waitFor(() => expect(store.taken).toHaveLength(2));
    const taken = store.taken.length;
    await settle();
    // the store holds its batch; the loader has made the one after it meanwhile
    expect(store.taken).toHaveLength(taken);
    expect(batchesMade()).toBe(taken + 1);
    const following = vi.mocked(logRecord.batchOf).mock.results.at(-1)!.value as EventBatch;
    store.letGo();
    await vi.waitFor(() => expect(store.taken.length).toBe(taken + 1));
    expect(store.taken.at(-1)).toBe(following);
  });

  it('makes none ahead when no full batch waits behind the one in the store', async () => {
    const { store } = await backlog(3);
    store.letGo();
    await vi.waitFor(() => expect(store.taken).toHaveLength(2));
    await settle();
    expect(batchesMade()).toBe(2);
  });

  it('makes none ahead while one record probes a store that failed', async () => {
    const { store } = await backlog(80, true);
    await vi.waitFor(() => expect(store.taken.length).toBeGreaterThan(2));
    await settle();
    // each try after the first failure is one record, and nothing more is made
    expect(batchesMade()).toBe(store.taken.length);
    expect(store.taken.slice(1).every((batch) => batch.usage[0]![2] === 20)).toBe(true);
  });

  it('fills a batch by its events, not by the funnel postings and custom events its records add to them', async () => {
    // custom events of a name each, with properties: their records hold half as much again beside their rows
    const customRows = () =>
      Array.from({ length: 20 }, (_, n) =>
        eventRow(1, { eventName: 'custom-event', props: { custom_data: { name: `step ${n}`, screen: `s${n}` } } }),
      );
    const sample = logRecord.encodeRequest(customRows(), 2_000);
    const perBatch = Math.floor(BATCH_BYTES / logRecord.rowBytesOf(sample));
    expect(sample.length * perBatch).toBeGreaterThan(1.4 * BATCH_BYTES);
    const { store } = await backlog(3 * perBatch, false, customRows);
    store.letGo();
    await vi.waitFor(() => expect(store.taken).toHaveLength(2));
    expect(store.taken[1]!.usage[0]![2]).toBe(20 * perBatch);
  });
});

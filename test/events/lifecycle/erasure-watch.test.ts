// The watch that reaches every node's durable log after an erase: a node compacts its log once per erase it has not
// acted on, whichever process ran the erase, and at its start for any erase at all (it may have been down then).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/db/store.ts';
import { ErasureWatch, markErasure } from '../../../src/events/lifecycle/erasure-watch.ts';
import { STORE_BACKEND } from '../../helpers/stores.ts';

describe(`erasure watch on ${STORE_BACKEND.name}`, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  // a fresh store per test: the erase mark is store-wide, and a test must see "no erase ever ran" when it says so
  beforeEach(async () => {
    ({ store, cleanup } = await STORE_BACKEND.open());
  });
  afterEach(() => cleanup());

  it('compacts once per erase it has not acted on, and at start for any erase', async () => {
    let compactions = 0;
    const compact = async () => {
      compactions += 1;
    };
    const watch = new ErasureWatch(store.sql, compact);
    await watch.check();
    expect(compactions).toBe(0); // no erase ever ran

    await markErasure(store.sql);
    await watch.check();
    await watch.check();
    expect(compactions).toBe(1);
    await markErasure(store.sql);
    await watch.check();
    expect(compactions).toBe(2);

    // a node starting after the erase
    const started = new ErasureWatch(store.sql, compact);
    await started.check();
    expect(compactions).toBe(3);
  });

  it('compacts once for looks that overlap (an erase on this node and the timer)', async () => {
    let compactions = 0;
    const watch = new ErasureWatch(store.sql, async () => {
      compactions += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
    });
    await markErasure(store.sql);
    await Promise.all([watch.check(), watch.check()]);
    await watch.check();
    expect(compactions).toBe(1);
  });

  it('tries again at the next look when a compaction failed', async () => {
    let attempts = 0;
    const watch = new ErasureWatch(store.sql, async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('disk full');
    });
    await markErasure(store.sql);
    await expect(watch.check()).rejects.toThrow('disk full');
    await watch.check();
    await watch.check();
    expect(attempts).toBe(2);
  });
});

describe('erasure watch while the store does not answer', () => {
  it('says once that it cannot look, never that a compaction failed, and says it again after a look worked', async () => {
    let answering = false;
    const looks = { failed: 0, worked: 0 };
    const said: string[] = [];
    const sql = {
      query: async () => {
        if (!answering) {
          looks.failed++;
          throw new Error('the store is reopening');
        }
        looks.worked++;
        return [];
      },
    };
    const watch = new ErasureWatch(
      sql as never,
      async () => {},
      (_error, message) => said.push(message),
    );
    watch.start(5);
    await expect
      .poll(() => looks.failed, { timeout: 30_000, message: 'several looks failed' })
      .toBeGreaterThanOrEqual(5);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/^looking for an erase/);
    answering = true;
    await expect.poll(() => looks.worked, { timeout: 30_000, message: 'a look worked' }).toBeGreaterThan(0);
    answering = false;
    const failedBefore = looks.failed;
    await expect
      .poll(() => looks.failed - failedBefore, { timeout: 30_000, message: 'several looks failed again' })
      .toBeGreaterThanOrEqual(5);
    await watch.stop();
    expect(said).toHaveLength(2);
    expect(said.some((message) => message.startsWith('compacting'))).toBe(false);
  });
});

// The token cache: served from memory while fresh, refreshed in the background, never trusted past
// its maximum age; store failures surface instead of turning into "invalid token".
import crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { TokenCache, type TokenGrant } from '../../src/tokens/cache.ts';
import { hashToken } from '../../src/tokens/format.ts';

const grant = (active = true): TokenGrant => ({
  appId: 1,
  appName: 'app',
  domains: ['a.example'],
  botId: null,
  active,
});

function harness() {
  let now = 0;
  let current: TokenGrant | null = grant();
  let loads = 0;
  let failing = false;
  const cache = new TokenCache(
    async () => {
      loads++;
      if (failing) throw new Error('store down');
      return current;
    },
    { freshMs: 1_000, maxAgeMs: 4_000, now: () => now },
  );
  return {
    cache,
    advance: (ms: number) => (now += ms),
    set: (value: TokenGrant | null) => (current = value),
    fail: (value: boolean) => (failing = value),
    loads: () => loads,
  };
}

describe('token cache', () => {
  it('loads once while fresh and concurrent lookups share one load', async () => {
    const h = harness();
    await Promise.all([h.cache.lookup('tma_x'), h.cache.lookup('tma_x'), h.cache.lookup('tma_x')]);
    h.advance(999);
    expect(await h.cache.lookup('tma_x')).toEqual(grant());
    expect(h.loads()).toBe(1);
  });

  it('hashes a token in use once, not at every lookup', async () => {
    const h = harness();
    const hashes = vi.spyOn(crypto, 'createHash');
    try {
      for (let i = 0; i < 50; i++) expect(await h.cache.lookup('tma_x')).toEqual(grant());
      expect(hashes).toHaveBeenCalledTimes(1);
    } finally {
      hashes.mockRestore();
    }
  });

  it('sees a revocation made elsewhere on the next lookup after 1 s, and never later than 4 s', async () => {
    const h = harness();
    await h.cache.lookup('tma_x');
    h.set(grant(false));
    h.advance(1_500);
    expect((await h.cache.lookup('tma_x'))!.active).toBe(true); // served while the refresh runs
    await new Promise((resolve) => setImmediate(resolve));
    expect((await h.cache.lookup('tma_x'))!.active).toBe(false);

    const idle = harness();
    await idle.cache.lookup('tma_y');
    idle.set(null);
    idle.advance(4_000);
    expect(await idle.cache.lookup('tma_y')).toBeNull(); // too old to serve: waits for the store
  });

  it('forgets a token invalidated on this node at once', async () => {
    const h = harness();
    await h.cache.lookup('tma_x');
    h.set(grant(false));
    h.cache.invalidate(hashToken('tma_x'));
    expect((await h.cache.lookup('tma_x'))!.active).toBe(false);
  });

  it('throws when the store fails and nothing usable is cached, and asks the store again only after 1 s', async () => {
    const h = harness();
    h.fail(true);
    await expect(h.cache.lookup('tma_x')).rejects.toThrow('store down');
    expect(h.loads()).toBe(1);
    // the store is back, but for 1 s after a failure lookups fail without asking it (any token)
    h.fail(false);
    h.advance(999);
    await expect(Promise.all([h.cache.lookup('tma_x'), h.cache.lookup('tma_other')])).rejects.toThrow('store down');
    expect(h.loads()).toBe(1);
    h.advance(1);
    expect(await h.cache.lookup('tma_x')).toEqual(grant());
    expect(h.loads()).toBe(2);
  });

  it('keeps serving a cached grant while the store fails, also past its maximum age', async () => {
    const h = harness();
    await h.cache.lookup('tma_x');
    h.fail(true);
    h.advance(1_500);
    expect(await h.cache.lookup('tma_x')).toEqual(grant()); // the background refresh fails
    await new Promise((resolve) => setImmediate(resolve));
    expect(await h.cache.lookup('tma_x')).toEqual(grant());
    expect(h.loads()).toBe(2); // the failed refresh is not retried at once
    h.advance(60_000);
    expect(await h.cache.lookup('tma_x')).toEqual(grant()); // the store still fails: the last grant stands
    expect(h.loads()).toBe(3);
    // once the store answers again, what it says counts
    h.fail(false);
    h.set(grant(false));
    h.advance(1_000);
    expect((await h.cache.lookup('tma_x'))!.active).toBe(false);
  });

  it('past its maximum age serves the cached grant when the store does not answer in time', async () => {
    let now = 0;
    let loads = 0;
    // the store answers once, then stalls (connections open, nothing comes back)
    const load = () => (loads++ === 0 ? Promise.resolve(grant()) : new Promise<TokenGrant | null>(() => {}));
    const cache = new TokenCache(load, { now: () => now, staleWaitMs: 20 });
    await cache.lookup('tma_x');
    now = 10_000;
    expect(await cache.lookup('tma_x')).toEqual(grant());
  });
});

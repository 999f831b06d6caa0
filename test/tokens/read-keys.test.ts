// Read keys on embedded PGlite and PostgreSQL: issued once and stored only as a hash, listed without the key,
// revoked with immediate effect, hidden from other owners, limited to 20 active per app, audited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/store.ts';
import { Secrets } from '../../src/tokens/secret.ts';
import { generateCredential, hashToken, TOKEN_CHECKSUM_PURPOSE } from '../../src/tokens/format.ts';
import { Makers } from '../../src/tokens/makers.ts';
import { MAX_ACTIVE_READ_KEYS, READ_KEY_KIND, ReadKeys } from '../../src/tokens/read-keys.ts';
import { OPERATOR, TokenRegistry, type Actor } from '../../src/tokens/registry.ts';
import { STORE_BACKEND } from '../helpers/stores.ts';

const alice: Actor = { surface: 'bot', telegramId: '1001' };
const bob: Actor = { surface: 'site', telegramId: '2002' };
const admin: Actor = { surface: 'bot', telegramId: '9009', isAdmin: true };

describe(`read keys on ${STORE_BACKEND.name}`, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let registry: TokenRegistry;
  let readKeys: ReadKeys;
  /** how often a test's ReadKeys asked the store for a key (readKey lookups) */
  let readKeyQueries = 0;

  beforeAll(async () => {
    ({ store, cleanup } = await STORE_BACKEND.open());
    const secrets = new Secrets(Buffer.from('read-keys-test-secret'));
    registry = new TokenRegistry(store.prisma, secrets);
    // counts every use of the readKey model, so a test can tell whether a lookup happened
    const counted = new Proxy(store.prisma, {
      get(target, property, receiver) {
        if (property === 'readKey') readKeyQueries++;
        return Reflect.get(target, property, receiver);
      },
    });
    readKeys = new ReadKeys(counted, registry, { makers: new Makers(store.prisma, secrets) });
    for (const [appName, owner] of [
      ['alice_app', alice],
      ['alice_other', alice],
      ['bob_app', bob],
    ] as const) {
      await registry.createApp(
        { appName, bot: '@owned_bot', domains: ['app.example.com'], ownerTelegramId: owner.telegramId },
        owner,
      );
    }
  });
  afterAll(() => cleanup?.());

  it('creates a key that authenticates as its app; the store holds only its hash and prefix', async () => {
    const { key, readKey } = await readKeys.create('alice_app', alice);
    expect(key).toMatch(/^tma_read_[A-Za-z0-9_-]{32}$/);
    expect(readKey).toEqual({
      prefix: key.slice(0, 17),
      appName: 'alice_app',
      createdAt: expect.any(Date),
      revokedAt: null,
      // the owner made it, and lists say so
      madeBy: { ref: expect.stringMatching(/^[A-Za-z0-9_-]{12}$/), name: null, role: 'owner' },
    });
    const app = await registry.getApp('alice_app', alice);
    expect(await readKeys.authenticate(key)).toEqual({ appId: app.appId, appName: 'alice_app' });

    const rows = await store.sql.query<Record<string, unknown>>('SELECT * FROM read_keys WHERE prefix = $1', [
      readKey.prefix,
    ]);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.hash).toBe(hashToken(key));
    // the key's secret part appears in no column
    expect(JSON.stringify(rows)).not.toContain(key.slice(17));
    expect(JSON.stringify(await store.prisma.auditLog.findMany({ select: { detail: true } }))).not.toContain(
      key.slice(17),
    );

    // this key's entry: other tests make keys in the same store, before or after this one
    const audits = await store.prisma.auditLog.findMany({ where: { action: 'read_key.create' } });
    const audit = audits.find((entry) => (entry.detail as { prefix?: string } | null)?.prefix === readKey.prefix);
    expect(audit).toMatchObject({ surface: 'bot', appName: 'alice_app', detail: { prefix: readKey.prefix } });
  });

  it('lists keys, active first, never with the key itself', async () => {
    const first = await readKeys.create('alice_other', alice);
    const second = await readKeys.create('alice_other', alice);
    await readKeys.revoke(first.readKey.prefix, alice);
    const listed = await readKeys.list('alice_other', alice);
    expect(listed.map((info) => [info.prefix, info.revokedAt === null])).toEqual([
      [second.readKey.prefix, true],
      [first.readKey.prefix, false],
    ]);
    for (const info of listed)
      expect(Object.keys(info).sort()).toEqual(['appName', 'createdAt', 'madeBy', 'prefix', 'revokedAt']);
    expect(JSON.stringify(listed)).not.toContain(second.key);
    expect(JSON.stringify(listed)).not.toContain(first.key);
  });

  it('revoke takes effect at once, even for a key just served from the cache', async () => {
    const { key, readKey } = await readKeys.create('alice_app', alice);
    expect(await readKeys.authenticate(key)).not.toBeNull();
    expect(await readKeys.authenticate(key)).not.toBeNull(); // now cached
    const revoked = await readKeys.revoke(`${readKey.prefix}…`, alice); // as copied from a list
    expect(revoked).toMatchObject({ prefix: readKey.prefix, appName: 'alice_app', revokedAt: expect.any(Date) });
    expect(await readKeys.authenticate(key)).toBeNull();
    // a second revoke says so and changes nothing
    await expect(readKeys.revoke(readKey.prefix, alice)).rejects.toMatchObject({
      code: 'key_revoked',
      message: expect.stringContaining('already revoked'),
    });
    const audit = await store.prisma.auditLog.findMany({
      where: { action: 'read_key.revoke', detail: { path: ['prefix'], equals: readKey.prefix } },
    });
    expect(audit).toHaveLength(1);
  });

  it('revokes by a shorter start of the prefix or the whole key, and refuses an ambiguous or too short one', async () => {
    // an app of its own: the count of active keys below is of the keys this test made
    await registry.createApp(
      { appName: 'bob_revokes', bot: '@owned_bot', domains: ['app.example.com'], ownerTelegramId: bob.telegramId },
      bob,
    );
    const { key, readKey } = await readKeys.create('bob_revokes', bob);
    const start = readKey.prefix.slice(0, 13); // tma_read_ and 4 characters
    expect((await readKeys.revoke(start, bob)).prefix).toBe(readKey.prefix);
    expect(await readKeys.authenticate(key)).toBeNull();

    const whole = await readKeys.create('bob_revokes', bob);
    expect((await readKeys.revoke(whole.key, bob)).prefix).toBe(whole.readKey.prefix);

    await expect(readKeys.revoke('tma_read_ab', bob)).rejects.toMatchObject({ code: 'key_not_found' });
    await expect(readKeys.revoke('tma_read_', bob)).rejects.toMatchObject({ code: 'key_not_found' });
    // "tma_read_" alone as a start: every key of the app would match
    await readKeys.create('bob_revokes', bob);
    await readKeys.create('bob_revokes', bob);
    const keys = (await readKeys.list('bob_revokes', bob)).filter((info) => info.revokedAt === null);
    // two active keys sharing a start are refused as ambiguous (made to share one by editing a stored prefix)
    await store.prisma.readKey.updateMany({
      where: { prefix: keys[1]!.prefix },
      data: { prefix: `${keys[0]!.prefix.slice(0, 13)}zzzz` },
    });
    await expect(readKeys.revoke(keys[0]!.prefix.slice(0, 13), bob)).rejects.toMatchObject({
      code: 'key_ambiguous',
      message: expect.stringContaining('give more of the key'),
    });
    expect((await readKeys.list('bob_revokes', bob)).filter((info) => info.revokedAt === null)).toHaveLength(2);
  });

  it('hides keys from whoever does not manage the app: another owner gets "not found"', async () => {
    const { key, readKey } = await readKeys.create('alice_app', alice);
    await expect(readKeys.list('alice_app', bob)).rejects.toMatchObject({
      code: 'app_not_found',
      message: 'There is no app named "alice_app".',
    });
    await expect(readKeys.create('alice_app', bob)).rejects.toMatchObject({ code: 'app_not_found' });
    await expect(readKeys.revoke(readKey.prefix, bob)).rejects.toMatchObject({
      code: 'key_not_found',
      message: `There is no read key starting with "${readKey.prefix}".`,
    });
    await expect(readKeys.revoke(readKey.prefix, bob, { appName: 'alice_app' })).rejects.toMatchObject({
      code: 'app_not_found',
    });
    await expect(readKeys.revoke(readKey.prefix, alice, { appName: 'alice_other' })).rejects.toMatchObject({
      code: 'key_not_found',
      message: `There is no read key of alice_other starting with "${readKey.prefix}".`,
    });
    expect(await readKeys.authenticate(key)).not.toBeNull();
    // administrators and the operator manage every app, marked as admin in the audit log
    expect((await readKeys.list('alice_app', OPERATOR)).map((info) => info.prefix)).toContain(readKey.prefix);
    await readKeys.revoke(readKey.prefix, admin);
    expect(await readKeys.authenticate(key)).toBeNull();
    const audit = await store.prisma.auditLog.findFirstOrThrow({
      where: { action: 'read_key.revoke', detail: { path: ['prefix'], equals: readKey.prefix } },
    });
    expect(audit).toMatchObject({ detail: { admin: true } });
  });

  it(`refuses the ${MAX_ACTIVE_READ_KEYS + 1}st active key of an app, also when asked at once; a revoke makes room`, async () => {
    await registry.createApp({ appName: 'busy_app', bot: '@owned_bot', domains: ['busy.example.com'] }, OPERATOR);
    for (let i = 0; i < MAX_ACTIVE_READ_KEYS - 2; i++) await readKeys.create('busy_app', OPERATOR);
    // five at once for the last two places: exactly two succeed
    const raced = await Promise.allSettled(Array.from({ length: 5 }, () => readKeys.create('busy_app', OPERATOR)));
    expect(raced.filter((result) => result.status === 'fulfilled')).toHaveLength(2);
    const refusal = raced.find((result) => result.status === 'rejected') as PromiseRejectedResult;
    expect(refusal.reason).toMatchObject({
      code: 'key_limit',
      message: 'busy_app already has 20 active read keys: revoke one before creating another.',
    });
    const listed = await readKeys.list('busy_app', OPERATOR);
    expect(listed.filter((info) => info.revokedAt === null)).toHaveLength(MAX_ACTIVE_READ_KEYS);
    await readKeys.revoke(listed[0]!.prefix, OPERATOR);
    await readKeys.create('busy_app', OPERATOR);
  });

  it('answers null for malformed and made-up keys without a lookup', async () => {
    const { key } = await readKeys.create('alice_app', alice);
    const before = readKeyQueries;
    for (const malformed of [
      '',
      'tma_read_',
      key.slice(0, -1),
      `${key}x`,
      `${key.slice(0, -1)}!`,
      key.replace('tma_read_', 'tma_reed_'),
      ' '.repeat(41),
      undefined as unknown as string,
    ]) {
      expect(await readKeys.authenticate(malformed)).toBeNull();
    }
    expect(readKeyQueries).toBe(before);
    // well shaped but made up: without this service's checksum, refused without a lookup too
    expect(await readKeys.authenticate(`tma_read_${'A'.repeat(32)}`)).toBeNull();
    expect(readKeyQueries).toBe(before);
  });

  it('forgets the keys of a deleted app', async () => {
    await registry.createApp({ appName: 'doomed_app', bot: '@owned_bot', domains: ['d.example.com'] }, OPERATOR);
    const { key } = await readKeys.create('doomed_app', OPERATOR);
    await registry.deleteApp('doomed_app', OPERATOR);
    expect(await store.prisma.readKey.count({ where: { app: { appName: 'doomed_app' } } })).toBe(0);
    expect(await readKeys.authenticate(key)).toBeNull();
  });

  it('keeps keys issued before checksums working until revoked; made-up ones of their shape cost no lookup', async () => {
    const app = await registry.getApp('bob_app', bob);
    // a key as issued before checksums: 32 random characters, its row marked unchecksummed
    const legacy = `tma_read_${'Lg0_-'.repeat(6)}Zz`;
    await store.prisma.readKey.create({
      data: { appId: app.appId, hash: hashToken(legacy), prefix: legacy.slice(0, 17) },
    });
    // a node started after it was issued (every node reads these keys' hashes at start)
    const counted = new Proxy(store.prisma, {
      get(target, property, receiver) {
        if (property === 'readKey') readKeyQueries++;
        return Reflect.get(target, property, receiver);
      },
    });
    const node = new ReadKeys(counted, registry);
    await node.ready();
    const before = readKeyQueries;
    expect(await node.authenticate(legacy)).toEqual({ appId: app.appId, appName: 'bob_app' });
    expect(readKeyQueries).toBe(before + 1);
    for (let i = 0; i < 20; i++) expect(await node.authenticate(`${legacy.slice(0, -2)}${i}x`)).toBeNull();
    expect(readKeyQueries).toBe(before + 1);
    await node.revoke(legacy, bob);
    const afterRevoke = readKeyQueries;
    expect(await node.authenticate(legacy)).toBeNull();
    expect(readKeyQueries).toBe(afterRevoke);
    // another node that still knows its hash asks the store and is told it was revoked
    expect(await readKeys.authenticate(legacy)).toBeNull();
  });

  it('accepts a key made on another node, and remembers a refused one instead of asking again', async () => {
    const elsewhere = new ReadKeys(store.prisma, registry);
    const { key } = await elsewhere.create('bob_app', bob);
    const app = await registry.getApp('bob_app', bob);
    expect(await readKeys.authenticate(key)).toEqual({ appId: app.appId, appName: 'bob_app' });
    // checksummed with this service's key but never stored (or since deleted): one lookup, then remembered
    const unknown = generateCredential(READ_KEY_KIND.format, registry.secrets.key(TOKEN_CHECKSUM_PURPOSE));
    const before = readKeyQueries;
    for (let i = 0; i < 10; i++) expect(await readKeys.authenticate(unknown)).toBeNull();
    expect(readKeyQueries).toBe(before + 1);
  });

  describe('the cache of accepted keys', () => {
    it('asks the store again once an entry is a few seconds old (a revoke on another node takes effect)', async () => {
      await registry.createApp({ appName: 'cached_app', bot: '@owned_bot', domains: ['c.example.com'] }, OPERATOR);
      let now = 1_000_000;
      const here = new ReadKeys(store.prisma, registry, { now: () => now });
      // another node: its revoke does not reach this node's cache
      const elsewhere = new ReadKeys(store.prisma, registry);
      const { key, readKey } = await here.create('cached_app', OPERATOR);
      expect(await here.authenticate(key)).not.toBeNull();
      await elsewhere.revoke(readKey.prefix, OPERATOR);
      now += 1_000;
      expect(await here.authenticate(key)).not.toBeNull(); // cached, at most a few seconds
      now += 3_500;
      expect(await here.authenticate(key)).toBeNull();
    });
  });
});

// The Analytics section's read API keys: created (the key shown once), listed without the key, revoked with
// immediate effect; other users get 404 as for a missing app; writes follow the same-origin JSON rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { create, PUBLIC_URL, startSiteApi } from './api-harness.ts';
import type { SiteClient } from './site-harness.ts';

let service: TestService;
let alice: SiteClient;
let bob: SiteClient;
let admin: SiteClient;

beforeAll(async () => {
  ({ service, alice, bob, admin } = await startSiteApi());
  await create(alice, 'alice_reads');
  await create(bob, 'bob_reads');
});
afterAll(() => service?.close());

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const authenticate = (key: string) => service.services.readKeys.authenticate(key);

async function activeCount(appName: string): Promise<number> {
  return service.store.prisma.readKey.count({ where: { app: { appName }, revokedAt: null } });
}

describe('read API keys in the site API', () => {
  it('creates a key shown once, lists it without the key, revokes it at once', async () => {
    // an app of its own: the other tests make keys of alice_reads
    await create(alice, 'alice_listed');
    const created = await alice.post('/api/apps/alice_listed/read-keys', {});
    expect(created.status, created.text).toBe(201);
    expect(Object.keys(created.json)).toEqual(['key', 'prefix', 'app_name', 'created_at']);
    const { key, prefix } = created.json;
    expect(key).toMatch(/^tma_read_[A-Za-z0-9_-]{32}$/);
    expect(created.json).toEqual({
      key,
      prefix: key.slice(0, 17),
      app_name: 'alice_listed',
      created_at: expect.any(String),
    });
    expect(created.json.created_at).toMatch(ISO);
    expect(await authenticate(key)).toMatchObject({ appName: 'alice_listed' });

    const listed = await alice.get('/api/apps/alice_listed/read-keys');
    expect(listed.status).toBe(200);
    expect(listed.text).not.toContain(key);
    expect(listed.json).toEqual([
      {
        prefix,
        app_name: 'alice_listed',
        created_at: created.json.created_at,
        revoked_at: null,
        made_by: { ref: expect.stringMatching(/^[A-Za-z0-9_-]{12}$/), name: null, role: 'owner' },
      },
    ]);

    const revoked = await alice.post('/api/apps/alice_listed/read-keys/revoke', { prefix });
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.json).toEqual({
      prefix,
      app_name: 'alice_listed',
      created_at: created.json.created_at,
      revoked_at: expect.stringMatching(ISO),
      made_by: listed.json[0].made_by,
    });
    expect(await authenticate(key)).toBeNull();
    expect((await alice.get('/api/apps/alice_listed/read-keys')).json).toEqual([revoked.json]);

    const again = await alice.post('/api/apps/alice_listed/read-keys/revoke', { prefix });
    expect(again.status).toBe(409);
    expect(again.json.message).toContain('already revoked');
  });

  it('explains a bad or unknown prefix', async () => {
    for (const body of [{}, { prefix: 42 }, { prefix: 'tma_read_a' }, { prefix: 'tma_abcdefgh' }]) {
      const answer = await alice.post('/api/apps/alice_reads/read-keys/revoke', body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.json).toEqual({
        message: "Send the read key's prefix as listed: tma_read_ and at least 4 more characters.",
        field: 'prefix',
      });
    }
    const unknown = await alice.post('/api/apps/alice_reads/read-keys/revoke', { prefix: 'tma_read_zzzzzzzz' });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ message: 'There is no read key of alice_reads starting with "tma_read_zzzzzzzz".' });
  });

  it('refuses the 21st active key with 409 and a sentence', async () => {
    await create(alice, 'alice_many');
    for (let i = 0; i < 20; i++) expect((await alice.post('/api/apps/alice_many/read-keys', {})).status).toBe(201);
    const refused = await alice.post('/api/apps/alice_many/read-keys', {});
    expect(refused.status).toBe(409);
    expect(refused.json).toEqual({
      message: 'alice_many already has 20 active read keys: revoke one before creating another.',
    });
    expect(await activeCount('alice_many')).toBe(20);
  });
});

describe('who may see and change read keys', () => {
  it('answers another user 404 as for a missing app, and changes nothing', async () => {
    const { key, prefix } = (await alice.post('/api/apps/alice_reads/read-keys', {})).json;
    const before = await activeCount('alice_reads');
    const routes: [string, string, unknown?][] = [
      ['GET', '/api/apps/alice_reads/read-keys'],
      ['POST', '/api/apps/alice_reads/read-keys', {}],
      ['POST', '/api/apps/alice_reads/read-keys/revoke', { prefix }],
    ];
    for (const [method, path, body] of routes) {
      const answer = await bob.request(method, path, { body });
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.json).toEqual({ message: 'There is no app named "alice_reads".' });
      const missing = await bob.request(method, path.replace('alice_reads', 'missing_app'), { body });
      expect(missing.json).toEqual({ message: 'There is no app named "missing_app".' });
    }
    // through his own app's path, Alice's key does not exist for Bob
    const foreign = await bob.post('/api/apps/bob_reads/read-keys/revoke', { prefix });
    expect(foreign.status).toBe(404);
    expect(foreign.json).toEqual({ message: `There is no read key of bob_reads starting with "${prefix}".` });
    expect(await activeCount('alice_reads')).toBe(before);
    expect(await authenticate(key)).not.toBeNull();

    // administrators manage every app's keys
    expect(
      (await admin.get('/api/apps/alice_reads/read-keys')).json.map((entry: { prefix: string }) => entry.prefix),
    ).toContain(prefix);
    expect((await admin.post('/api/apps/alice_reads/read-keys/revoke', { prefix })).status).toBe(200);
    expect(await authenticate(key)).toBeNull();
  });

  it('refuses writes from another origin or not in JSON with 403, and accepts them from the public address', async () => {
    const { key, prefix } = (await alice.post('/api/apps/alice_reads/read-keys', {})).json;
    const before = await activeCount('alice_reads');
    const writes: [string, unknown][] = [
      ['/api/apps/alice_reads/read-keys', {}],
      ['/api/apps/alice_reads/read-keys/revoke', { prefix }],
    ];
    for (const origin of ['https://evil.example', 'null']) {
      for (const [path, body] of writes) {
        const answer = await alice.request('POST', path, { body, origin });
        expect(answer.status, `${path} from ${origin}`).toBe(403);
        expect(answer.json).toEqual({ message: 'Cross-site or non-JSON request refused.' });
      }
    }
    for (const [path] of writes) {
      const answer = await alice.request('POST', path);
      expect(answer.status, path).toBe(403);
      const form = await alice.request('POST', path, {
        raw: `prefix=${prefix}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect([403, 415], `${path}: ${form.status}`).toContain(form.status);
    }
    expect(await activeCount('alice_reads')).toBe(before);
    expect(await authenticate(key)).not.toBeNull();

    const proxied = await alice.post('/api/apps/alice_reads/read-keys/revoke', { prefix }, { origin: PUBLIC_URL });
    expect(proxied.status, proxied.text).toBe(200);
    expect(await authenticate(key)).toBeNull();
  });
});

// Made-up server keys, read keys and share link secrets are refused with their usual answers without asking the
// store; real ones work, also those issued before checksums, until revoked; made-up ones are limited per client,
// a read key's limit is one however "Bearer" is spelt, and a public link has a limit of its own. Both engines.
import crypto from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/tokens/format.ts';
import { OPERATOR } from '../../src/tokens/registry.ts';
import { SHARE_LINK_REQUESTS_PER_MINUTE } from '../../src/site/share-limit.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND } from '../helpers/stores.ts';

const URL_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-';
/** a credential of the kind's shape that nobody issued */
const madeUp = (prefix: string) =>
  prefix + Array.from(crypto.randomBytes(32), (byte) => URL_ALPHABET[byte % URL_ALPHABET.length]).join('');

const TOKEN_INVALID = { message: 'Token is invalid.' };
const READ_KEY_REQUIRED =
  'A read key is required: send "Authorization: Bearer tma_read_…" with a key of this app (from the bot, the site or the CLI).';
const LINK_GONE = { message: 'This link does not exist or was revoked.' };

const serverPost = (service: TestService, key: string, appName: string) =>
  postEvents(service.url, makeEvent(appName, { event_name: 'bot-command' }), {
    origin: null,
    headers: { authorization: `Bearer ${key}` },
  });
const read = (service: TestService, appName: string, authorization: string) =>
  fetch(`${service.url}/api/v1/apps/${appName}/summary`, { headers: { authorization } });
const shared = (service: TestService, secret: string) => fetch(`${service.url}/api/share/${secret}/dashboard?days=7`);

type Model = 'serverKey' | 'readKey' | 'shareLink';

/** makes every lookup of the kinds' rows fail and counts them: a refusal that needs none still answers */
function storeRefusesLookups(service: TestService): { lookups: () => number; restore: () => void } {
  const prisma = service.store.prisma as unknown as Record<Model, { findUnique: unknown }>;
  const models: Model[] = ['serverKey', 'readKey', 'shareLink'];
  const originals = models.map((model) => prisma[model].findUnique);
  let lookups = 0;
  for (const model of models)
    prisma[model].findUnique = () => {
      lookups++;
      return Promise.reject(new Error('store unavailable'));
    };
  return {
    lookups: () => lookups,
    restore: () => models.forEach((model, i) => (prisma[model].findUnique = originals[i])),
  };
}

describe(`credentials on ${SERVICE_BACKEND.name}`, () => {
  let service: TestService;
  let drop: () => Promise<void>;
  let env: Record<string, string>;

  // a fresh service (and store) per test: made-up credentials count against the client's address, which is this
  // process in every test, in the service's memory; a test that floods them would leave the next test no budget
  beforeEach(async () => {
    const backend = await SERVICE_BACKEND.open();
    drop = backend.drop;
    env = { ...backend.env, READ_API_RATE_LIMIT_MAX: '3' };
    service = await startTestService(env);
    expectProjectStore(service.store);
    await service.createApp('creds_app');
    await service.createApp('legacy_app');
  });
  afterEach(async () => {
    await service?.close();
    await drop?.();
  });

  it('refuses made-up server keys, read keys and share secrets with the usual answers without a lookup', async () => {
    const { key: serverKey } = await service.services.serverKeys.create('creds_app', OPERATOR);
    const { key: readKey } = await service.services.readKeys.create('creds_app', OPERATOR);
    const { secret } = await service.services.shareLinks.create('creds_app', OPERATOR);
    const store = storeRefusesLookups(service);
    try {
      for (let i = 0; i < 3; i++) {
        const posted = await serverPost(service, madeUp('tma_server_'), 'creds_app');
        expect([posted.status, posted.json]).toEqual([400, TOKEN_INVALID]);
        const readAnswer = await read(service, 'creds_app', `Bearer ${madeUp('tma_read_')}`);
        expect([readAnswer.status, await readAnswer.json()]).toEqual([401, { message: READ_KEY_REQUIRED }]);
        const link = await shared(service, madeUp('tma_share_'));
        expect([link.status, await link.json()]).toEqual([404, LINK_GONE]);
        expect((await fetch(`${service.url}/share/${madeUp('tma_share_')}`)).status).toBe(404);
      }
      // made-up read keys share one count per client (3 a minute here), which real keys do not touch
      const limited = await read(service, 'creds_app', `Bearer ${madeUp('tma_read_')}`);
      expect(limited.status).toBe(429);
      expect(store.lookups()).toBe(0);
    } finally {
      store.restore();
    }
    // the real ones work
    expect((await serverPost(service, serverKey, 'creds_app')).status).toBe(201);
    expect((await read(service, 'creds_app', `Bearer ${readKey}`)).status).toBe(200);
    expect((await shared(service, secret)).status).toBe(200);
  });

  it('counts one read key as one client however "Bearer" and its spaces are written', async () => {
    const { key } = await service.services.readKeys.create('creds_app', OPERATOR);
    const statuses: number[] = [];
    for (const header of [`bearer ${key}`, `BEARER    ${key}`, `Bearer ${key}`, `beaRer  ${key}`])
      statuses.push((await read(service, 'creds_app', header)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('gives the public link a limit of its own, counted before the link is looked up', async () => {
    await service.createApp('shared_app');
    const { secret } = await service.services.shareLinks.create('shared_app', OPERATOR);
    for (let i = 0; i < SHARE_LINK_REQUESTS_PER_MINUTE; i++)
      expect((await fetch(`${service.url}/share/${secret}`)).status).toBe(200);
    const store = storeRefusesLookups(service);
    try {
      const refused = await shared(service, secret);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await refused.json()) as { message: string }).message).toMatch(/at most 60 a minute/);
      expect((await fetch(`${service.url}/share/${secret}`)).status).toBe(429);
      expect(store.lookups()).toBe(0);
    } finally {
      store.restore();
    }
    // another app's link is not affected
    const other = await service.services.shareLinks.create('creds_app', OPERATOR);
    expect((await shared(service, other.secret)).status).toBe(200);
  });

  it('keeps credentials issued before checksums working after a restart, until they are revoked', async () => {
    const app = await service.store.prisma.app.findUniqueOrThrow({ where: { appName: 'legacy_app' } });
    const [serverKey, readKey, secret] = [madeUp('tma_server_'), madeUp('tma_read_'), madeUp('tma_share_')];
    const row = (value: string) => ({ appId: app.id, hash: hashToken(value), prefix: value.slice(0, 17) });
    await service.store.prisma.serverKey.create({ data: row(serverKey) });
    await service.store.prisma.readKey.create({ data: row(readKey) });
    await service.store.prisma.shareLink.create({ data: row(secret) });
    await service.close();
    service = await startTestService({ ...env, DATA_DIR: service.dataDir });

    expect((await serverPost(service, serverKey, 'legacy_app')).status).toBe(201);
    expect((await read(service, 'legacy_app', `Bearer ${readKey}`)).status).toBe(200);
    expect((await shared(service, secret)).status).toBe(200);

    await service.services.serverKeys.revoke(serverKey, OPERATOR);
    await service.services.readKeys.revoke(readKey, OPERATOR);
    await service.services.shareLinks.revoke('legacy_app', OPERATOR);
    const posted = await serverPost(service, serverKey, 'legacy_app');
    expect([posted.status, posted.json]).toEqual([400, TOKEN_INVALID]);
    expect((await read(service, 'legacy_app', `Bearer ${readKey}`)).status).toBe(401);
    expect((await shared(service, secret)).status).toBe(404);
  });

  it("refuses one client's flood of made-up share secrets 429 past the limit, every refusal alike and with the site's security headers", async () => {
    const store = storeRefusesLookups(service);
    try {
      let answer = await shared(service, madeUp('tma_share_'));
      for (let i = 0; answer.status === 404 && i < SHARE_LINK_REQUESTS_PER_MINUTE; i++)
        answer = await shared(service, madeUp('tma_share_'));
      const refusals = [
        answer,
        await shared(service, madeUp('tma_share_')),
        await shared(service, madeUp('tma_share_')),
      ];
      for (const refused of refusals) {
        expect(refused.status).toBe(429);
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(((await refused.json()) as { message: string }).message).toMatch(
          // the limiter says the wait as "1 minute" at its start, then in seconds
          /^Too many requests for this link: at most 60 a minute\. Try again in (1 minute|\d+ seconds?)\.$/,
        );
        expect(refused.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
        expect(refused.headers.get('x-frame-options')).toBe('DENY');
        expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
        expect(refused.headers.get('cross-origin-resource-policy')).toBe('same-origin');
      }
      // the page of a made-up link shares the client's count
      expect((await fetch(`${service.url}/share/${madeUp('tma_share_')}`)).status).toBe(429);
      expect(store.lookups()).toBe(0);
    } finally {
      store.restore();
    }
  });
});

// Made-up tokens are refused without asking the store: issued tokens carry a keyed checksum, tokens issued
// without one are known to every node from start; everything else answers "Token is invalid." at once.
import crypto from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { generateToken, hashToken, TOKEN_FORMAT } from '../../src/tokens/format.ts';
import { CredentialScreen } from '../../src/tokens/screen.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const INVALID = '{"message":"Token is invalid."}';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const madeUp = () => 'tma_' + Array.from(crypto.randomBytes(40), (byte) => ALPHABET[byte % ALPHABET.length]).join('');

describe('token screen', () => {
  const key = crypto.randomBytes(32);

  it('passes tokens issued with its key and refuses made-up ones of the same shape', () => {
    const screen = new CredentialScreen(TOKEN_FORMAT, key, new Set());
    const issued = generateToken(key);
    expect(issued).toMatch(/^tma_[0-9A-Za-z]{40}$/);
    expect(screen.mayBeIssued(issued)).toBe(true);
    let passed = 0;
    for (let i = 0; i < 20_000; i++) if (screen.mayBeIssued(madeUp())) passed++;
    expect(passed).toBe(0);
    expect(new CredentialScreen(TOKEN_FORMAT, crypto.randomBytes(32), new Set()).mayBeIssued(issued)).toBe(false);
    // one character changed anywhere breaks the checksum
    const changed = issued.slice(0, 10) + (issued[10] === 'a' ? 'b' : 'a') + issued.slice(11);
    expect(screen.mayBeIssued(changed)).toBe(false);
  });

  it('checks a token in use once, not on every request, and a flood of made-up tokens does not make it forget', () => {
    const screen = new CredentialScreen(TOKEN_FORMAT, key, new Set());
    const issued = generateToken(key);
    const hmacs = vi.spyOn(crypto, 'createHmac');
    try {
      for (let i = 0; i < 100; i++) expect(screen.mayBeIssued(issued)).toBe(true);
      expect(hmacs).toHaveBeenCalledTimes(1);
      for (let i = 0; i < 20_000; i++) expect(screen.mayBeIssued(madeUp())).toBe(false);
      hmacs.mockClear();
      expect(screen.mayBeIssued(issued)).toBe(true);
      expect(hmacs).not.toHaveBeenCalled();
    } finally {
      hmacs.mockRestore();
    }
  });

  it('passes tokens issued without a checksum only when they are known', () => {
    const old = madeUp();
    const screen = new CredentialScreen(TOKEN_FORMAT, key, new Set([hashToken(old)]));
    expect(screen.mayBeIssued(old)).toBe(true);
    expect(screen.mayBeIssued(madeUp())).toBe(false);
  });

  it('refuses anything not shaped like a token', () => {
    const screen = new CredentialScreen(TOKEN_FORMAT, key, new Set());
    const issued = generateToken(key);
    for (const value of [
      'tma_short',
      issued + 'x',
      issued.slice(0, -1),
      issued.replace('tma_', 'tmb_'),
      issued.slice(0, 20) + '-' + issued.slice(21),
    ]) {
      expect(screen.mayBeIssued(value), value).toBe(false);
    }
  });
});

describe('made-up tokens on POST /events', () => {
  let service: TestService | undefined;
  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  it('are answered "Token is invalid." without the store, which real tokens need', async () => {
    service = await startTestService();
    const token = await service.createApp('screen_app');
    const origin = 'https://app.example.com';
    expect((await postEvents(service.url, makeEvent('screen_app'), { token, origin })).status).toBe(201);
    // the store stops answering: a lookup can only fail now
    const original = service.store.prisma.token.findUnique;
    let lookups = 0;
    service.store.prisma.token.findUnique = (() => {
      lookups++;
      return Promise.reject(new Error('store unavailable'));
    }) as unknown as typeof original;
    try {
      for (let i = 0; i < 50; i++) {
        const answer = await postEvents(service.url, makeEvent('screen_app'), { token: madeUp(), origin });
        expect(answer.status).toBe(400);
        expect(answer.text).toBe(INVALID);
      }
      expect(lookups).toBe(0);
    } finally {
      service.store.prisma.token.findUnique = original;
    }
  });

  it('keep working when issued without a checksum, also after a restart', async () => {
    service = await startTestService();
    await service.createApp('legacy_app');
    const legacy = madeUp();
    const app = await service.store.prisma.app.findUniqueOrThrow({ where: { appName: 'legacy_app' } });
    await service.store.prisma.token.updateMany({ where: { appId: app.id }, data: { revokedAt: new Date() } });
    await service.store.prisma.token.create({
      data: { appId: app.id, hash: hashToken(legacy), prefix: legacy.slice(0, 10) },
    });
    const dataDir = service.dataDir;
    await service.close();
    service = await startTestService({ DATA_DIR: dataDir });
    const origin = 'https://app.example.com';
    expect((await postEvents(service.url, makeEvent('legacy_app'), { token: legacy, origin })).status).toBe(201);
    expect((await postEvents(service.url, makeEvent('legacy_app'), { token: madeUp(), origin })).text).toBe(INVALID);
  });
});

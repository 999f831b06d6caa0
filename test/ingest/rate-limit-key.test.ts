// The ingest rate limit's key per client: kept in the process, it is the client's address and credential as they are
// (no keyed hash per request); kept in Redis, it is hashed (test/events/lifecycle/privacy.test.ts reads Redis's keys).
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
let token: string;

beforeAll(async () => {
  service = await startTestService({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' });
  token = await service.createApp('counted_app');
});
afterAll(() => service?.close());

describe('the ingest rate limit without Redis', () => {
  it('counts a client by its address and token without a keyed hash of them, and still limits it', async () => {
    expect((await postEvents(service.url, makeEvent('counted_app'), { token })).status).toBe(201); // token checked
    const hmacs = vi.spyOn(crypto, 'createHmac');
    try {
      expect((await postEvents(service.url, makeEvent('counted_app'), { token })).status).toBe(201);
      // the event's key and its user's pseudonym, nothing for the rate limit
      expect(hmacs).toHaveBeenCalledTimes(2);
    } finally {
      hmacs.mockRestore();
    }
    expect((await postEvents(service.url, makeEvent('counted_app'), { token })).status).toBe(201);
    expect((await postEvents(service.url, makeEvent('counted_app'), { token })).status).toBe(429);
  });
});

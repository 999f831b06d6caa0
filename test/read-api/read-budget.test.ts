// A read past its time budget answers the documented 503 with its clear message, on the read API and the public
// link, on both stores, while the events sent meanwhile are acknowledged and stored.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SqlReader } from '../../src/db/sql.ts';
import { OPERATOR } from '../../src/tokens/registry.ts';
import { sharePath } from '../../src/tokens/share-links.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND } from '../helpers/stores.ts';

const BUDGET_MS = 500;
const MESSAGE = 'This query took longer than 0.5 s; try a shorter period or fewer filters.';
/**
 * every read of the store made slow: a real statement of an hour (longer than the test may run, so the answers and
 * the event stored meanwhile come from the budget, not from the read ending; how soon: bench/read-restart.ts)
 * through the store's read runner first; `slowed.asked` counts the reads made slow
 */
function slowDown(reads: SqlReader, slowed: { asked: number }): () => void {
  const query = reads.query;
  reads.query = (async (text: string, params?: unknown[]) => {
    slowed.asked++;
    await query.call(reads, 'SELECT pg_sleep(3600)');
    return query.call(reads, text, params);
  }) as SqlReader['query'];
  return () => {
    reads.query = query;
  };
}

describe(`reads past their budget on ${SERVICE_BACKEND.name}`, () => {
  let service: TestService;
  let drop: () => Promise<void>;
  let key: string;
  let secret: string;
  let token: string;

  beforeAll(async () => {
    const backend = await SERVICE_BACKEND.open();
    drop = backend.drop;
    service = await startTestService({ ...backend.env, READ_BUDGET_MS: String(BUDGET_MS) });
    expectProjectStore(service.store);
    token = await service.createApp('slow_app');
    ({ key } = await service.services.readKeys.create('slow_app', OPERATOR));
    ({ secret } = await service.services.shareLinks.create('slow_app', OPERATOR));
  });
  afterAll(async () => {
    await service?.close();
    await drop?.();
  });

  it('answers 503 with the message on the read API and the public link, and stores what arrives meanwhile', async () => {
    const slowed = { asked: 0 };
    const restore = slowDown(service.store.reads, slowed);
    try {
      const answers = Promise.all([
        fetch(`${service.url}/api/v1/apps/slow_app/retention?days=365`, {
          headers: { authorization: `Bearer ${key}` },
        }),
        fetch(`${service.url}${sharePath(secret).replace('/share/', '/api/share/')}/dashboard?days=90`),
      ]);
      await expect
        .poll(() => slowed.asked, { timeout: 30_000, message: 'a read of the requests reached the store' })
        .toBeGreaterThan(0);
      // an event sent while the reads run is acknowledged, and the loader stores it without waiting for their hour
      const sent = await postEvents(service.url, makeEvent('slow_app', { session_id: crypto.randomUUID() }), { token });
      expect(sent.status).toBe(201);
      await service.loaded();

      const [retention, shared] = await answers;
      expect(retention!.status).toBe(503);
      expect(await retention!.json()).toEqual({ message: MESSAGE });
      expect(shared!.status).toBe(503);
      expect(await shared!.json()).toEqual({ message: MESSAGE });
    } finally {
      restore();
    }
    // the event sent meanwhile is counted once reads are fast again (a loaded machine may miss the short budget
    // now and then, and says so with the same 503)
    await expect
      .poll(
        async () => {
          const summary = await fetch(`${service.url}/api/v1/apps/slow_app/summary`, {
            headers: { authorization: `Bearer ${key}` },
          });
          return summary.status === 200 ? ((await summary.json()) as { events: number }).events : summary.status;
        },
        { message: 'the summary of the app counting the event sent during the slow reads', timeout: 120_000 },
      )
      .toBe(1);
  });

  it('says so in the OpenAPI document of every read API route', async () => {
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    };
    const routes = Object.entries(document.paths).filter(([route]) => route.startsWith('/api/v1/'));
    expect(routes.length).toBeGreaterThan(0);
    for (const [, { get }] of routes) expect(get!.responses['503']!.description).toContain('took longer than');
  });
});

// A trickle of events (a small app's traffic) is stored in a few commits a second, not one commit per request: a
// commit's fixed cost, not its events, is most of what a lightly used service spends.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents } from '../../helpers/events.ts';
import { startTestService, type TestService } from '../../helpers/service.ts';

let service: TestService;
let token: string;

beforeAll(async () => {
  service = await startTestService();
  token = await service.createApp('trickle_app');
});

afterAll(async () => {
  await service?.close();
});

/** the loader's commits so far */
async function commits(): Promise<number> {
  const { values } = await service.services.metrics.commitEvents.get();
  return values.find((value) => value.metricName === 'tma_commit_events_count')?.value ?? 0;
}

describe('a trickle of events', () => {
  it('is stored in at most two commits a second', async () => {
    // whatever the start committed (the app's first activity) is over before the trickle
    await service.loaded();
    const before = await commits();
    const started = performance.now();
    for (let i = 0; i < 10; i++) {
      const response = await postEvents(service.url, makeEvent('trickle_app'), { token });
      expect(response.status).toBe(201);
      await sleep(100);
    }
    const elapsedSeconds = (performance.now() - started) / 1000;
    // what a reader would wait for: every event stored (which may take one commit more, at once)
    await service.loaded();
    const made = (await commits()) - before;
    expect(made).toBeGreaterThan(0);
    expect(made, `${made} commits in ${elapsedSeconds.toFixed(2)} s`).toBeLessThanOrEqual(
      Math.ceil(elapsedSeconds * 2) + 1,
    );
    const [stored] = await service.store.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events e JOIN apps a ON a.id = e.app_id WHERE a.app_name = 'trickle_app'`,
    );
    expect(stored!.n).toBe(10);
  });
});

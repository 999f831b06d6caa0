// The durable log's bound: while the store cannot take events, requests get 201 until the log holds
// LOG_MAX_BYTES; beyond it "Failed to record" (nothing of those requests is stored later). Once the store
// answers again the backlog is stored, the log empties and requests get 201 again; every 201 is stored once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventPlane } from '../../src/events/write/event-plane.ts';
import { APP_ORIGIN, BatchFactory, FAILED, sendBody, SUCCESS, tallyAnswers, type Answer } from '../helpers/load.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const APP = 'log_full_app';
const LOG_MAX_BYTES = 1024 * 1024;

describe('a full durable log', () => {
  let service: TestService;
  let token: string;
  const factory = new BatchFactory(APP, { seed: 3, minEvents: 10, maxEvents: 20 });

  beforeAll(async () => {
    service = await startTestService({
      LOG_MAX_BYTES: String(LOG_MAX_BYTES),
      LOG_MIN_FREE_BYTES: '0',
      RATE_LIMIT_MAX: '1000000',
    });
    token = await service.createApp(APP);
  });
  afterAll(() => service?.close());

  it('answers "Failed to record" beyond LOG_MAX_BYTES while the store is down, and 201 again once it caught up', async () => {
    const events: EventPlane = service.services.events;
    const insertBatch = events.insertBatch;
    events.insertBatch = () =>
      Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    const answers: (Answer & { seqs: number[] })[] = [];
    try {
      // each request is a few kilobytes: the bound is reached within a few hundred
      for (let i = 0; i < 2_000 && !answers.some((answer) => answer.status === 400); i++) {
        const batch = factory.next();
        answers.push({ ...(await sendBody(service.url, batch.body, { token, origin: APP_ORIGIN })), seqs: batch.seqs });
      }
      const refused = answers.filter((answer) => answer.status !== 201);
      expect(tallyAnswers(refused)).toBe(`1 × 400 ${FAILED}`);
      expect(answers.length).toBeGreaterThan(50);
      expect(service.services.ingestLog!.stats().bytes).toBeLessThanOrEqual(LOG_MAX_BYTES);
    } finally {
      events.insertBatch = insertBatch;
    }

    await service.loaded();
    expect(service.services.ingestLog!.stats().records).toBe(0);
    const after = factory.next();
    const again = await sendBody(service.url, after.body, { token, origin: APP_ORIGIN });
    expect(again.status).toBe(201);
    expect(again.text).toBe(SUCCESS);
    answers.push({ ...again, seqs: after.seqs });

    await service.loaded();
    const acknowledged = answers.filter((answer) => answer.status === 201).flatMap((answer) => answer.seqs);
    const rows = await service.store.sql.query<{ seq: number; n: number }>(
      `SELECT (props->'custom_data'->>'seq')::int AS seq, count(*)::int AS n FROM events GROUP BY 1`,
    );
    expect(rows.filter((row) => row.n !== 1)).toEqual([]);
    expect(rows.map((row) => row.seq).sort((a, b) => a - b)).toEqual(acknowledged.sort((a, b) => a - b));
  });
});

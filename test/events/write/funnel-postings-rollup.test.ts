// The funnel postings have two writers of one byte format: ingest encodes a request's postings (the batch's gathering,
// taken when every event of the batch is new) and the event insert computes them from the rows it really inserted
// (when the batch held an event stored before). Both must give every event the same step, day, attributes, user,
// session, time and key, or a funnel would count an event differently depending on whether its batch held a retry.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../../src/db/store.ts';
import { SqlEventPlane, type EventRow } from '../../../src/events/write/event-plane.ts';
import { chunksOf, entryBytes } from '../../../src/events/write/funnel-posting-format.ts';
import { eventRow } from '../../helpers/events.ts';
import { STORE_BACKEND } from '../../helpers/stores.ts';

describe(`funnel postings on ${STORE_BACKEND.name}`, () => {
  let store: Store;
  let cleanup: () => Promise<void>;
  let plane: SqlEventPlane;
  let appCount = 0;

  beforeAll(async () => {
    ({ store, cleanup } = await STORE_BACKEND.open());
    plane = new SqlEventPlane(store.sql);
  });
  afterAll(() => cleanup?.());

  const newApp = async () =>
    (
      await store.prisma.app.create({
        data: { appName: `postings_${++appCount}`, bot: '@postings_bot', domains: ['a.example'] },
      })
    ).id;

  /** every event of the app's postings, as text: step, day, chunk attributes, user, session, time and key */
  async function postedEvents(appId: number, leaveOut: string): Promise<string[]> {
    const rows = await store.sql.query<{ step: string; day: string; entries: Buffer }>(
      `SELECT step, to_char(day, 'YYYY-MM-DD') AS day, entries FROM funnel_postings WHERE app_id = $1 AND step <> $2`,
      [appId, leaveOut],
    );
    const events: string[] = [];
    for (const { step, day, entries: stored } of rows) {
      // PGlite gives bytea as a Uint8Array
      const entries = Buffer.from(stored);
      for (const chunk of chunksOf(entries)) {
        const user = entries.subarray(chunk.userAt, chunk.userAt + 16).toString('hex');
        const session = entries.subarray(chunk.sessionAt, chunk.sessionAt + 16).toString('hex');
        for (let index = 0; index < chunk.count; index++)
          events.push(
            [
              step,
              day,
              JSON.stringify(chunk.attributes),
              user,
              session,
              entryBytes(entries, chunk, index).toString('hex'),
            ].join(' '),
          );
      }
    }
    return events.sort();
  }

  /** the same events for any app: two users, two days, custom events, long and non-ASCII attributes, Premium or not */
  function eventsOf(appId: number): EventRow[] {
    const users = [Buffer.alloc(16, 1), Buffer.alloc(16, 2)];
    const sessions = ['8a4c4a4e-2d3b-4a8e-9d0f-1b2c3d4e5f60', '8a4c4a4e-2d3b-4a8e-9d0f-1b2c3d4e5f61'];
    const rows: EventRow[] = [];
    for (let n = 0; n < 12; n++) {
      const occurredAt = new Date(Date.parse('2026-11-20T23:59:50Z') + n * 1_700);
      rows.push(
        eventRow(appId, {
          eventKey: crypto.createHash('sha256').update(`posting ${n}`).digest().subarray(0, 16),
          userKey: users[n % 2]!,
          sessionId: sessions[n % 2]!,
          occurredAt,
          receivedAt: occurredAt,
          day: occurredAt.toISOString().slice(0, 10),
          eventName: n % 3 === 0 ? 'app-init' : 'custom-event',
          props: n % 3 === 0 ? {} : { custom_data: { name: n % 3 === 1 ? 'buy ✓' : `step ${'x'.repeat(80)}` } },
          platform: n % 2 ? 'android' : `weird ${'p'.repeat(80)}`,
          locale: n % 2 ? 'ru' : null,
          startParam: n % 2 ? 'ref_Ω' : null,
          isPremium: n % 2 === 0,
        }),
      );
    }
    return rows;
  }

  it('are the same whether ingest gathered them or the event insert computed them from the rows it inserted', async () => {
    const [gathered, computed] = [await newApp(), await newApp()];
    await plane.insert(eventsOf(gathered));
    // an event stored before makes the batch not all new: the insert computes the postings from its rows
    const retried = eventRow(computed, { eventName: 'app-hide', occurredAt: new Date('2026-11-20T12:00:00Z') });
    await plane.insert([retried]);
    expect(await plane.insert([...eventsOf(computed), retried])).toBe(12);

    const [fromIngest, fromInsert] = [
      await postedEvents(gathered, 'app-hide'),
      await postedEvents(computed, 'app-hide'),
    ];
    expect(fromIngest).toHaveLength(12);
    expect(fromInsert).toEqual(fromIngest);
  });
});

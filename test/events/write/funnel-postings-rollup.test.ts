// A batch is stored whole or not at all: one holding an event stored before (a client's retry, a log record replayed)
// or twice is sent again without it, gathered anew. What ingest gathered (users, custom events, funnel postings) then
// describes exactly the events inserted: every rollup reads as if the batch had held only its new events.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EventRow } from '../../../src/events/write/event-plane.ts';
import { chunksOf, entryBytes } from '../../../src/events/write/funnel-posting-format.ts';
import { ROLLUPS } from '../../../src/events/write/rollups/index.ts';
import { DAILY_USAGE } from '../../../src/events/write/rollups/usage.ts';
import { FUNNEL_POSTINGS } from '../../../src/events/write/rollups/funnel-postings.ts';
import { eventRow } from '../../helpers/events.ts';
import { eventPlaneSuite } from '../../helpers/event-plane-suite.ts';
import { STORE_BACKEND } from '../../helpers/stores.ts';

describe(`a batch holding events stored before, on ${STORE_BACKEND.name}`, () => {
  const suite = eventPlaneSuite('postings');

  /** every event of the app's postings, as text: step, day, chunk attributes, user, session, time and key */
  async function postedEvents(appId: number, leaveOut: string): Promise<string[]> {
    const rows = await suite.store.sql.query<{ step: string; day: string; entries: Buffer }>(
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

  /**
   * the app's rows of every rollup table but the quota's (it counts what was admitted, repeats too) and the funnel
   * postings' (a commit's rows: compared event by event), without the app's id
   */
  async function rollupRows(appId: number): Promise<Record<string, string[]>> {
    const tables = ROLLUPS.filter((rollup) => rollup !== DAILY_USAGE && rollup !== FUNNEL_POSTINGS).flatMap((rollup) =>
      rollup.tables.map((table) => table.name),
    );
    const rows: Record<string, string[]> = {};
    for (const table of tables) {
      const found = await suite.store.sql.query<{ row: string }>(
        `SELECT (to_jsonb(t) - 'app_id')::text AS row FROM ${table} t WHERE app_id = $1`,
        [appId],
      );
      rows[table] = found.map((row) => row.row).sort();
    }
    return rows;
  }

  it('counts only the new events in every rollup, funnel postings event by event, as a batch of them alone', async () => {
    const [alone, again] = [await suite.newApp(), await suite.newApp()];
    await suite.plane.insert(eventsOf(alone));
    const events = eventsOf(again);
    // a third of the events first; then two thirds, one of them twice (the statement refuses the batch and it is sent
    // again without them); then all of them, one twice (checked before it is sent, as after a replay); then all again
    expect(await suite.plane.insert(events.slice(0, 4))).toBe(4);
    expect(await suite.plane.insert([...events.slice(0, 8), events[6]!])).toBe(4);
    expect(await suite.plane.insert([...events, events[10]!])).toBe(4);
    expect(await suite.plane.insert(events)).toBe(0);

    expect(await postedEvents(again, '')).toEqual(await postedEvents(alone, ''));
    expect(await postedEvents(alone, '')).toHaveLength(12);
    const [rowsAlone, rowsAgain] = [await rollupRows(alone), await rollupRows(again)];
    expect(rowsAgain).toEqual(rowsAlone);
    expect(rowsAlone.daily_custom_events).toHaveLength(4);
    const [stored] = await suite.store.sql.query<{ events: number }>(
      'SELECT count(*)::int AS events FROM events WHERE app_id = $1',
      [again],
    );
    expect(stored!.events).toBe(12);
  });

  it('stores the first of an event sent twice in one batch', async () => {
    const app = await suite.newApp();
    const [event] = eventsOf(app);
    const later = { ...event!, occurredAt: new Date(event!.occurredAt.getTime() + 1_000), platform: 'ios' };
    expect(await suite.plane.insert([event!, later])).toBe(1);
    const rows = await suite.store.sql.query<{ platform: string }>('SELECT platform FROM events WHERE app_id = $1', [
      app,
    ]);
    expect(rows).toEqual([{ platform: event!.platform }]);
  });
});

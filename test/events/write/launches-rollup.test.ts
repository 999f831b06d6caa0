// The verified launches rollup on both stores, batch by batch as the loader commits them: the sessions whose launch
// verified, one per signature whatever else the batch holds (a replay in the same batch, a launch replayed into another
// app's, an altered copy), their page events counted across commits (a server key's never), and a batch sent again
// counting nothing twice.
import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EventRow } from '../../../src/events/write/event-plane.ts';
import { eventRow } from '../../helpers/events.ts';
import { eventPlaneSuite } from '../../helpers/event-plane-suite.ts';
import { STORE_BACKEND } from '../../helpers/stores.ts';

describe(`verified launches on ${STORE_BACKEND.name}`, () => {
  const suite = eventPlaneSuite('launches');
  const launch = (appId: number, check: string, proof: Buffer, sessionId = crypto.randomUUID()): EventRow =>
    eventRow(appId, { sessionId, launchCheck: check, launchDay: '2026-11-28', launchProof: proof });
  const outcomes = async (appId: number) =>
    Object.fromEntries(
      (
        await suite.store.sql.query<{ outcome: string; n: number }>(
          'SELECT outcome, sum(launches)::int AS n FROM daily_launch_checks WHERE app_id = $1 GROUP BY 1',
          [appId],
        )
      ).map((row) => [row.outcome, row.n]),
    );

  it('keeps one session per signature within one batch, and tells a replay into another app from an altered copy', async () => {
    const [first, other] = [await suite.newApp(), await suite.newApp()];
    const proof = crypto.randomBytes(16);
    const batch = [
      launch(first, 'verified', proof),
      launch(first, 'verified', proof),
      // the same signature on altered data, in the app it verified for
      launch(first, 'bad_signature', proof),
      // the same launch sent to an app of another bot
      launch(other, 'bad_signature', proof),
    ];
    expect(await suite.plane.insert(batch)).toBe(4);
    expect(await outcomes(first)).toEqual({ verified: 1, replayed: 1, bad_signature: 1 });
    expect(await outcomes(other)).toEqual({ other_bot: 1 });
    // the batch again (a log record loaded twice): nothing stored, nothing counted
    expect(await suite.plane.insert(batch)).toBe(0);
    expect(await outcomes(first)).toEqual({ verified: 1, replayed: 1, bad_signature: 1 });
    const [kept] = await suite.store.sql.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM verified_sessions WHERE proof = $1',
      [proof],
    );
    expect(kept!.n).toBe(1);
  });

  it("adds the page's events of a verified session across commits, never a server key's", async () => {
    const appId = await suite.newApp();
    const sessionId = crypto.randomUUID();
    const at = (eventName: string, sentByServer?: true) => eventRow(appId, { sessionId, eventName, sentByServer });
    await suite.plane.insert([
      launch(appId, 'verified', crypto.randomBytes(16), sessionId),
      at('connection-completed'),
    ]);
    await suite.plane.insert([at('custom-event'), at('transaction-signed', true)]);
    await suite.plane.insert([at('app-hide')]);
    const [session] = await suite.store.sql.query(
      'SELECT events::int, wallet_connected, transaction_signed FROM verified_sessions WHERE session_id = $1',
      [sessionId],
    );
    expect(session).toEqual({ events: 4, wallet_connected: true, transaction_signed: false });
  });
});

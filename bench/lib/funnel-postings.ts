// Funnel postings for events loaded straight into the events table: made by the service's own encoder, one app and
// day at a time, into one row per app, step and day, as the event insert would have stored them.
import type pg from 'pg';
import { BatchPostings } from '../../src/events/write/batch-postings.ts';
import type { EventRow } from '../../src/events/write/event-columns.ts';
import { encodeRequestPostings } from '../../src/events/write/funnel-posting-format.ts';
import { insertPostingsSql } from '../../src/events/write/rollups/funnel-postings.ts';

/** the columns the postings are made of, as an EventRow names them */
const POSTED_COLUMNS = `app_id AS "appId", event_key AS "eventKey", received_at AS "receivedAt", occurred_at AS "occurredAt",
  day::text AS day, event_name AS "eventName", session_id::text AS "sessionId", user_key AS "userKey",
  is_premium AS "isPremium", is_success AS "isSuccess", platform, locale, start_param AS "startParam", props`;

/** stores the funnel postings of every event the table holds (funnel_postings empty before) */
export async function postFunnelsOfEvents(client: pg.Client): Promise<void> {
  const { rows: days } = await client.query<{ app_id: number; day: string }>(
    `SELECT DISTINCT app_id, day::text AS day FROM events ORDER BY 1, 2`,
  );
  for (const { app_id: appId, day } of days) {
    const { rows } = await client.query<EventRow>(
      `SELECT ${POSTED_COLUMNS} FROM events WHERE app_id = $1 AND day = $2::date ORDER BY occurred_at`,
      [appId, day],
    );
    const postings = new BatchPostings();
    postings.add(appId, encodeRequestPostings(rows));
    const { groups, entries } = postings.toParams();
    await client.query(insertPostingsSql('$1', '$2'), [groups, entries]);
  }
}

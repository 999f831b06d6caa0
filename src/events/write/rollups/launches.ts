// Launches Telegram signed: the sessions whose app-init verified (one signature verifies one session, counted on the
// UTC day of its auth_date) with what the page reported in them, and every app-init's outcome per day: what the catalog
// ranks on, the verified users of every surface, and the reasons owners are shown for launches that did not verify.
import { SIGNED_TRANSACTION_EVENT, WALLET_CONNECTION_EVENT } from '../../wallet-funnel.ts';
import { beforeFirstKeptDay, KEPT, defineRollup } from './rollup.ts';

export const LAUNCHES = defineRollup({
  name: 'verified launches',
  tables: [
    {
      name: 'verified_sessions',
      keyedBy: 'session',
      retention: { kind: 'deleted', when: [beforeFirstKeptDay('day')] },
      erasure: { kind: 'user' },
    },
    { name: 'daily_launch_checks', keyedBy: 'day', retention: KEPT, erasure: KEPT },
  ],
  // One pass over the rows inserted gathers each session's page events (a server key's never count) and its verified
  // launch; that session is kept as verified unless its signature is kept already (a replay), and a session verified
  // by an earlier commit gets the new events. No step joins two of the statement's CTEs: their row estimates are
  // guesses, and a nested loop over two of them is quadratic in the batch (the launches' own check asks a CTE only
  // through IN, which is hashed). A launch's outcome: verified when its session was kept now, or was kept before with
  // this signature; else replayed. Of the sessions of one batch with one signature, the first in key order is kept. A signature that does not check for
  // this app's bot but verified another app's launch is that launch replayed into this app (other_bot).
  sql: () => `session_launches AS (
  SELECT app_id, session_id,
         count(*) FILTER (WHERE sent_by_server IS NOT TRUE) AS events,
         coalesce(bool_or(event_name = '${WALLET_CONNECTION_EVENT}') FILTER (WHERE sent_by_server IS NOT TRUE), false) AS wallet_connected,
         coalesce(bool_or(event_name = '${SIGNED_TRANSACTION_EVENT}') FILTER (WHERE sent_by_server IS NOT TRUE), false) AS transaction_signed,
         (array_agg(launch_proof) FILTER (WHERE launch_check = 'verified'))[1] AS proof,
         (array_agg(launch_day) FILTER (WHERE launch_check = 'verified'))[1] AS launch_day,
         (array_agg(user_key) FILTER (WHERE launch_check = 'verified'))[1] AS user_key
  FROM inserted GROUP BY app_id, session_id
), new_verified AS (
  INSERT INTO verified_sessions (app_id, session_id, day, user_key, proof, events, wallet_connected, transaction_signed)
  SELECT app_id, session_id, launch_day, user_key, proof, events, wallet_connected, transaction_signed
  FROM session_launches WHERE proof IS NOT NULL
  ORDER BY app_id, session_id
  ON CONFLICT DO NOTHING
  RETURNING app_id, session_id, day, proof
), verified_activity AS (
  -- a session verified by an earlier commit (this statement's snapshot does not show the rows new_verified adds)
  UPDATE verified_sessions v
  SET events = v.events + a.events, wallet_connected = v.wallet_connected OR a.wallet_connected,
      transaction_signed = v.transaction_signed OR a.transaction_signed
  FROM session_launches a WHERE v.app_id = a.app_id AND v.session_id = a.session_id AND a.events > 0
), launch_outcomes AS (
  SELECT app_id, day, 'verified' AS outcome FROM new_verified
  UNION ALL
  SELECT l.app_id, l.day, CASE
    WHEN l.launch_check = 'verified' THEN CASE
      WHEN EXISTS (SELECT 1 FROM verified_sessions v WHERE v.proof = l.launch_proof AND v.app_id = l.app_id AND v.session_id = l.session_id)
      THEN 'verified' ELSE 'replayed' END
    WHEN l.launch_check = 'bad_signature'
      AND (EXISTS (SELECT 1 FROM verified_sessions v WHERE v.proof = l.launch_proof AND v.app_id <> l.app_id)
           OR (l.launch_proof IN (SELECT proof FROM new_verified)
               AND (l.launch_proof, l.app_id) NOT IN (SELECT proof, app_id FROM new_verified)))
    THEN 'other_bot'
    ELSE l.launch_check END
  FROM inserted l
  WHERE l.launch_check IS NOT NULL
    AND NOT (l.launch_check = 'verified' AND (l.app_id, l.session_id) IN (SELECT app_id, session_id FROM new_verified))
), launch_counts AS (
  INSERT INTO daily_launch_checks AS c (app_id, day, outcome, launches)
  SELECT app_id, day, outcome, count(*) FROM launch_outcomes GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (app_id, day, outcome) DO UPDATE SET launches = c.launches + excluded.launches
)`,
  readBy: [
    'src/events/read/verified.ts (verified users, launch checks)',
    'src/ranking/compute.ts',
    'src/events/read/revenue.ts (purchases in verified sessions)',
  ],
});

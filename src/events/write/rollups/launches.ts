// Launches Telegram signed: the sessions whose app-init verified (one signature verifies one session, counted on the
// UTC day of its auth_date) with what the page reported in them, and every app-init's outcome per day: what the catalog
// ranks on, the verified users of every surface, and the reasons owners are shown for launches that did not verify.
import { SIGNED_TRANSACTION_EVENT, WALLET_CONNECTION_EVENT } from '../../wallet-funnel.ts';
import { beforeFirstKeptDay, KEPT, type Rollup } from './rollup.ts';

export const LAUNCHES: Rollup = {
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
  // The page's events of each session of the batch (a server key's never count), added to a verified session's row
  // whether it verified now or before. A signature already kept for another session is a replay; one that did not
  // check for this app's bot but verified another app's launch is that launch replayed into this app (other_bot).
  sql: () => `launches AS (
  SELECT app_id, day, session_id, user_key, launch_check, launch_day, launch_proof
  FROM inserted WHERE launch_check IS NOT NULL
), session_activity AS (
  SELECT app_id, session_id, count(*) AS events,
         bool_or(event_name = '${WALLET_CONNECTION_EVENT}') AS wallet_connected,
         bool_or(event_name = '${SIGNED_TRANSACTION_EVENT}') AS transaction_signed
  FROM inserted WHERE sent_by_server IS NOT TRUE GROUP BY 1, 2
), new_verified AS (
  INSERT INTO verified_sessions (app_id, session_id, day, user_key, proof, events, wallet_connected, transaction_signed)
  SELECT l.app_id, l.session_id, l.launch_day, l.user_key, l.launch_proof, a.events, a.wallet_connected, a.transaction_signed
  FROM launches l JOIN session_activity a ON a.app_id = l.app_id AND a.session_id = l.session_id
  WHERE l.launch_check = 'verified'
  ORDER BY l.app_id, l.session_id
  ON CONFLICT DO NOTHING
  RETURNING app_id, session_id, proof
), verified_activity AS (
  -- a session verified by an earlier commit (this statement's snapshot does not show the rows new_verified adds)
  UPDATE verified_sessions v
  SET events = v.events + a.events, wallet_connected = v.wallet_connected OR a.wallet_connected,
      transaction_signed = v.transaction_signed OR a.transaction_signed
  FROM session_activity a WHERE v.app_id = a.app_id AND v.session_id = a.session_id
), launch_outcomes AS (
  SELECT l.app_id, l.day, CASE
    WHEN l.launch_check = 'verified' THEN CASE
      WHEN EXISTS (SELECT 1 FROM new_verified n WHERE n.proof = l.launch_proof AND n.app_id = l.app_id AND n.session_id = l.session_id)
        OR EXISTS (SELECT 1 FROM verified_sessions v WHERE v.proof = l.launch_proof AND v.app_id = l.app_id AND v.session_id = l.session_id)
      THEN 'verified' ELSE 'replayed' END
    WHEN l.launch_check = 'bad_signature'
      AND (EXISTS (SELECT 1 FROM verified_sessions v WHERE v.proof = l.launch_proof AND v.app_id <> l.app_id)
           OR EXISTS (SELECT 1 FROM new_verified n WHERE n.proof = l.launch_proof AND n.app_id <> l.app_id))
    THEN 'other_bot'
    ELSE l.launch_check END AS outcome
  FROM launches l
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
};

// Users and sessions per app and day, each counted on the day first seen: the dashboard's daily users and sessions.
import { KEPT, defineRollup } from './rollup.ts';

export const APP_STATS = defineRollup({
  name: 'daily users and sessions',
  tables: [{ name: 'daily_app_stats', keyedBy: 'day', retention: KEPT, erasure: KEPT }],
  sql: () => `stats AS (
  INSERT INTO daily_app_stats AS s (app_id, day, users, sessions)
  SELECT app_id, day, sum(users), sum(sessions) FROM (
    SELECT app_id, day, 1 AS users, 0 AS sessions FROM new_users
    UNION ALL SELECT app_id, day, 0, 1 FROM new_sessions
  ) AS fresh GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (app_id, day) DO UPDATE SET users = s.users + excluded.users, sessions = s.sessions + excluded.sessions
)`,
  reads: ['new_users', 'new_sessions'],
  readBy: [
    'src/events/read/dashboard.ts (dashboard)',
    'src/events/read/insights.ts (summary)',
    'src/ranking/compute.ts',
  ],
});

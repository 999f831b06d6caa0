// Mini App sessions, each counted once on the UTC day it started, with the launch attributes it started with; what a bot
// sends with a server key is no Mini App session.
import { rollupText } from '../../custom-events.ts';
import { beforeFirstKeptDay, defineRollup } from './rollup.ts';

export const SESSIONS = defineRollup({
  name: 'sessions',
  tables: [
    {
      name: 'daily_sessions',
      keyedBy: 'session',
      // no index by day: a chunk reads the app's sessions until it has found its rows
      retention: { kind: 'deleted', when: [beforeFirstKeptDay('day')] },
      // a session is counted on its first day only, which need not be the day of the user's event met
      erasure: { kind: 'session', match: ['session_id'] },
    },
  ],
  sql: () => `session_starts AS (
  SELECT DISTINCT ON (app_id, session_id) app_id, day, session_id, platform, locale, start_param
  FROM inserted WHERE sent_by_server IS NOT TRUE ORDER BY app_id, session_id, day, occurred_at
), new_sessions AS (
  -- a session already counted (on an earlier day, or by an earlier commit) is not counted again
  INSERT INTO daily_sessions (app_id, day, session_id, platform, locale, start_param)
  SELECT app_id, day, session_id, ${rollupText('platform')}, ${rollupText('locale')}, ${rollupText('start_param')}
  FROM session_starts ORDER BY app_id, session_id
  ON CONFLICT DO NOTHING RETURNING app_id, day, session_id, platform, locale, start_param
)`,
  readBy: ['src/events/read/dashboard.ts (filtered dashboard)', 'src/events/read/insights.ts (filtered summary)'],
});

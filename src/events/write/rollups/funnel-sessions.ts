// The wallet funnel's steps each session took per day, as bits: the dashboard's funnel.
import { FUNNEL, FUNNEL_STEP_BITS } from '../../wallet-funnel.ts';
import { beforeFirstKeptDay, type Rollup } from './rollup.ts';

export const FUNNEL_SESSIONS: Rollup = {
  name: 'wallet funnel sessions',
  tables: [
    {
      name: 'daily_funnel_sessions',
      keyedBy: 'session',
      retention: { kind: 'deleted', when: [beforeFirstKeptDay('day')] },
      erasure: { kind: 'session', match: ['day', 'session_id'] },
    },
  ],
  sql: () => `funnel AS (
  INSERT INTO daily_funnel_sessions AS f (app_id, day, session_id, steps)
  SELECT app_id, day, session_id, bit_or(${FUNNEL_STEP_BITS})::smallint
  FROM inserted
  WHERE event_name IN (${FUNNEL.map((name) => `'${name}'`).join(', ')})
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (app_id, day, session_id) DO UPDATE SET steps = f.steps | excluded.steps
)`,
  readBy: ['src/events/read/dashboard.ts (dashboard)'],
};

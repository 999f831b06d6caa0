// Sessions per day by launch platform, language and start_param: the dashboard's dimension lists.
import { KEPT, defineRollup } from './rollup.ts';

export const DIMENSIONS = defineRollup({
  name: 'dimensions',
  tables: [
    {
      name: 'daily_dimensions',
      keyedBy: 'day',
      retention: KEPT,
      erasure: {
        kind: 'rewritten',
        how: "the user's sessions leave the counts; a value only the user sent leaves every day",
      },
    },
  ],
  // from the returned rows alone: a join back to session_starts was planned as a nested loop over two CTEs
  // (estimated at one row each), quadratic in the batch
  sql: () => `dimensions AS (
  INSERT INTO daily_dimensions AS d (app_id, day, dimension, value, sessions)
  SELECT n.app_id, n.day, x.dimension, x.value, count(*)
  FROM new_sessions n
  CROSS JOIN LATERAL (VALUES ('platform', n.platform), ('locale', n.locale), ('start_param', n.start_param)) AS x(dimension, value)
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (app_id, day, dimension, value) DO UPDATE SET sessions = d.sessions + excluded.sessions
)`,
  reads: ['new_sessions'],
  readBy: ['src/events/read/dashboard.ts (dashboard)'],
});

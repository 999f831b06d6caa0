// Events per app, day and name: the dashboard's events, its chart by name and the catalog ranking's counts.
import { KEPT, defineRollup } from './rollup.ts';

export const EVENT_COUNTS = defineRollup({
  name: 'event counts',
  tables: [{ name: 'daily_event_counts', keyedBy: 'day', retention: KEPT, erasure: KEPT }],
  sql: () => `counts AS (
  INSERT INTO daily_event_counts AS c (app_id, day, event_name, events)
  SELECT app_id, day, event_name, count(*) FROM inserted GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (app_id, day, event_name) DO UPDATE SET events = c.events + excluded.events
)`,
  readBy: [
    'src/events/read/dashboard.ts (dashboard)',
    'src/events/read/insights.ts (summary)',
    'src/ranking/compute.ts',
  ],
});

// Each app's last event and events in all: the lists of apps, `apps show`, the bot's app card.
import { KEPT, defineRollup } from './rollup.ts';

export const ACTIVITY = defineRollup({
  name: 'app activity',
  tables: [{ name: 'app_activity', keyedBy: 'app', retention: KEPT, erasure: KEPT }],
  sql: () => `activity AS (
  INSERT INTO app_activity AS a (app_id, last_event_at, events_total)
  SELECT app_id, max(received_at), count(*) FROM inserted GROUP BY 1 ORDER BY 1
  ON CONFLICT (app_id) DO UPDATE SET last_event_at = greatest(a.last_event_at, excluded.last_event_at),
                                     events_total = a.events_total + excluded.events_total
)`,
  readBy: ['src/events/write/event-plane.ts (activities)'],
});

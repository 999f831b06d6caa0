// Events and bytes per app and UTC day of receipt, as the daily quota admitted them (duplicates included): what
// every node reads to reconcile its quota counts.
import { param } from '../../../db/named-sql.ts';
import { USAGE } from '../batch-values.ts';
import { KEPT, defineRollup } from './rollup.ts';

export const DAILY_USAGE = defineRollup({
  name: 'daily usage',
  tables: [{ name: 'daily_app_usage', keyedBy: 'day', retention: KEPT, erasure: KEPT }],
  sql: () => `usage AS (
  INSERT INTO daily_app_usage AS q (app_id, day, events, bytes)
  SELECT ${USAGE.select('u')} FROM jsonb_array_elements(${param('usage')}::jsonb) AS u
  WHERE ${USAGE.get('u', 'app_id')} IN (SELECT id FROM live_apps) ORDER BY 1, 2
  ON CONFLICT (app_id, day) DO UPDATE SET events = q.events + excluded.events, bytes = q.bytes + excluded.bytes
)`,
  readBy: ['src/events/request/quota.ts'],
});

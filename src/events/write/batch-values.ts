// The event insert's per-batch values that travel as JSON arrays besides the rows (EVENT_COLUMNS): each a list of
// named, typed columns, so the statement reads them by name.
import { JsonTuple } from '../../db/json-tuples.ts';

/** a batch's events and bytes per app and UTC day of receipt, as the daily quota admitted them */
export const USAGE = new JsonTuple([
  { name: 'app_id', kind: 'int' },
  { name: 'day', kind: 'date' },
  { name: 'events', kind: 'bigint' },
  { name: 'bytes', kind: 'bigint' },
] as const);

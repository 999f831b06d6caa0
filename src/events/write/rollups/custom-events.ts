// Custom events per day and name (daily_custom_events) and per property value (daily_custom_values), within the
// bounds of each app's catalog (custom_catalog), whose name slots are the bits of daily_users.custom_names.
import { JsonTuple } from '../../../db/json-tuples.ts';
import { param } from '../../../db/named-sql.ts';
import { MAX_CUSTOM_NAMES, MAX_CUSTOM_PROPERTIES, MAX_CUSTOM_VALUES, OTHER } from '../../custom-events.ts';
import { KEPT, defineRollup } from './rollup.ts';
import { REQUEST_SUMMARY } from '../request-summary.ts';

/** custom_catalog's levels: a tracked name (with its slot), a property of a name, a value of a property */
export const CATALOG_LEVEL = { name: 0, property: 1, value: 2 } as const;
const NAME = CATALOG_LEVEL.name;
const PROPERTY = CATALOG_LEVEL.property;
const VALUE = CATALOG_LEVEL.value;

/** the columns of custom_catalog a level fills (the others hold '') */
const CATALOG_COLUMNS = ['name', 'property', 'value'];

/** the catalog entry `known` is the row `alias` at a level keyed by `keys` */
function catalogMatch(level: number, keys: string[], alias: string): string {
  const columns = CATALOG_COLUMNS.map(
    (column) => `known.${column} = ${keys.includes(column) ? `${alias}.${column}` : `''`}`,
  );
  return [`known.app_id = ${alias}.app_id`, `known.level = ${level}`, ...columns].join(' AND ');
}

/**
 * Whether the row `alias` (app_id and the level's key columns) was in the catalog before this statement: one index
 * probe, as a scalar subquery in a select list so it stays one. As a join, the planner (which estimates a CTE over the
 * batch at one row) may scan the catalog once per row; as an EXISTS, the plan made once per connection may instead
 * hash the whole catalog, every app's, at each batch (chosen while the catalog was small, kept as it grows).
 */
function inCatalog(level: number, keys: string[], alias: string): string {
  return `coalesce((SELECT true FROM custom_catalog known WHERE ${catalogMatch(level, keys, alias)}), false)`;
}

/**
 * Whether the row `alias` is tracked: `known` (in the catalog before) or among the entries the statement adds
 * (`added`, a CTE that is empty but for an app's first batches).
 */
function tracked(known: string, keys: string[], alias: string, added: string): string {
  const matches = keys.map((key) => `a.${key} = ${alias}.${key}`).join(' AND ');
  return `(${alias}.${known} OR EXISTS (SELECT 1 FROM ${added} a WHERE a.app_id = ${alias}.app_id AND ${matches}))`;
}

/**
 * One level of the catalog inside the event insert: the rows of `source` (a CTE with app_id, the level's key
 * columns and `known`) not tracked yet that the level's room takes (per parent: the app, a name, a property),
 * inserted into custom_catalog. Yields a CTE `name` listing what this statement added (app_id and the key columns),
 * after the CTE `${name}_room` it reads: the room left under each parent.
 */
function catalogLevel(name: string, source: string, known: string, level: number, keys: string[], limit: number) {
  const parents = ['app_id', ...keys.slice(0, -1)];
  const filled = CATALOG_COLUMNS.map((column) => (keys.includes(column) ? `s.${column}` : `''`));
  const parentMatch = (left: string, right: string) =>
    parents.map((key) => `${left}.${key} = ${right}.${key}`).join(' AND ');
  return `${name}_room AS MATERIALIZED (
  -- the room left under each parent of the candidates, counted once per parent rather than per candidate: a property
  -- of unique values brings thousands of candidates under one
  SELECT p.*, ${limit} - (SELECT count(*) FROM custom_catalog x WHERE x.level = ${level} AND ${parentMatch('x', 'p')}) AS room
  FROM (SELECT DISTINCT ${parents.join(', ')} FROM ${source} WHERE NOT ${known}) p
), ${name} AS (
  INSERT INTO custom_catalog AS c (app_id, level, name, property, value)
  SELECT s.app_id, ${level}, ${filled.join(', ')} FROM (
    SELECT f.*, r.room, row_number() OVER (PARTITION BY ${parents.map((key) => `f.${key}`).join(', ')} ORDER BY f.${keys.at(-1)}) AS place
    FROM (SELECT DISTINCT app_id, ${keys.join(', ')} FROM ${source} WHERE NOT ${known}) f
    -- the candidates of a full parent are not even ordered
    JOIN ${name}_room r ON ${parentMatch('r', 'f')} AND r.room > 0
  ) s
  WHERE s.place <= s.room
  ORDER BY 1, 3, 4, 5
  -- a candidate a concurrent commit inserted meanwhile is returned by the update, so it is tracked here too
  ON CONFLICT (app_id, level, name, property, value) DO UPDATE SET level = excluded.level
  RETURNING app_id, ${keys.join(', ')}
)`;
}

/** a day and custom event name's events as ingest counts them, with its property values' events (CUSTOM_PAIR) */
export const CUSTOM_SUMMARY = new JsonTuple([
  { name: 'app_id', kind: 'int' },
  { name: 'day', kind: 'date' },
  { name: 'name', kind: 'text' },
  { name: 'events', kind: 'bigint' },
  { name: 'pairs', kind: 'jsonb' },
] as const);

/** a property value's events of a day and custom event name */
export const CUSTOM_PAIR = new JsonTuple([
  { name: 'property', kind: 'text' },
  { name: 'value', kind: 'text' },
  { name: 'events', kind: 'bigint' },
] as const);

/** custom_catalog's level holding, per app, the next free name slot (in slot; name, property and value '') */
const NEXT_SLOT = 3;

/**
 * The custom-event part of the event insert, reading the CTEs `name_lists` (each list of custom event names a user of
 * the batch has on a day, as JSON text, once; src/events/write/request-summary.ts) and custom_summary, the batch's
 * custom events as ingest counted them (CUSTOM_SUMMARY arrays). Names take slots,
 * each a bit of daily_users.custom_names, so a custom event's users are found through the users' own days. Slots are
 * handed out from one row per app, locked by each commit that adds names: commits from several nodes at once take
 * distinct slots (a name two of them add at once keeps the first one's, the other's stays unused). The rooms of
 * properties and values are read in the commit's snapshot: commits from several nodes at once may each take the last
 * places, so an app can end a few entries above a limit, never without bound.
 */
function customEventsSql(): string {
  return `name_lists AS (
  -- the lists of custom event names the batch's users have, each once: a batch's users mostly share a few
  SELECT DISTINCT app_id, names FROM batch_users
), custom_summary AS (
  SELECT ${CUSTOM_SUMMARY.select('c')}
  FROM jsonb_array_elements(${param('custom_events')}::text::jsonb) AS c
  WHERE ${CUSTOM_SUMMARY.get('c', 'app_id')} IN (SELECT id FROM live_apps)
), custom_keys AS (
  -- one catalog probe per name of the batch's users (those of its new events among them), not per event
  SELECT k.app_id, k.name, (SELECT known.slot FROM custom_catalog known WHERE ${catalogMatch(NAME, ['name'], 'k')}) AS slot
  FROM (SELECT DISTINCT l.app_id, n.name FROM name_lists l CROSS JOIN LATERAL jsonb_array_elements_text(l.names::jsonb) AS n(name)) k
), name_candidates AS (
  SELECT app_id, name, row_number() OVER (PARTITION BY app_id ORDER BY name) AS place,
         count(*) OVER (PARTITION BY app_id) AS candidates
  FROM custom_keys k WHERE slot IS NULL
    -- a full app's names beyond the limit need no slot, nor the lock of its row: its slots only grow (its next free
    -- slot probed per app's candidate, a scalar subquery as inCatalog's, never a scan of every app's catalog)
    AND coalesce((SELECT known.slot FROM custom_catalog known WHERE ${catalogMatch(NEXT_SLOT, [], 'k')}), 0) < ${MAX_CUSTOM_NAMES}
), name_slots AS (
  -- the app's next free slot moves past its candidates; the row's lock orders commits adding names to one app
  INSERT INTO custom_catalog AS c (app_id, level, name, property, value, slot)
  SELECT app_id, ${NEXT_SLOT}, '', '', '', least(count(*), ${MAX_CUSTOM_NAMES}) FROM name_candidates GROUP BY app_id ORDER BY app_id
  ON CONFLICT (app_id, level, name, property, value) DO UPDATE SET slot = c.slot + excluded.slot
  WHERE c.slot < ${MAX_CUSTOM_NAMES}
  RETURNING app_id, slot AS next_slot
), custom_names AS (
  INSERT INTO custom_catalog AS c (app_id, level, name, property, value, slot)
  SELECT app_id, ${NAME}, name, '', '', slot FROM (
    -- the candidates' slots end just before the next free one (those beyond the limit get none)
    SELECT n.app_id, n.name, s.next_slot - least(n.candidates, ${MAX_CUSTOM_NAMES}) + n.place - 1 AS slot
    FROM name_candidates n JOIN name_slots s ON s.app_id = n.app_id) AS placed
  WHERE slot < ${MAX_CUSTOM_NAMES}
  ORDER BY 1, 3
  -- a name a concurrent commit inserted meanwhile keeps its slot, returned by the update
  ON CONFLICT (app_id, level, name, property, value) DO UPDATE SET level = excluded.level
  RETURNING app_id, name, slot
), name_map AS (
  -- the batch's tracked names and their slots as one object: an event finds its name's in it by a binary search
  SELECT jsonb_object_agg(app_id || ' ' || name, slot) AS slots FROM (
    SELECT app_id, name, slot FROM custom_keys WHERE slot IS NOT NULL
    UNION ALL SELECT app_id, name, slot FROM custom_names) AS tracked
), custom_summary_named AS (
  SELECT app_id, day, CASE WHEN slot IS NOT NULL THEN name ELSE '${OTHER}' END AS name, slot IS NOT NULL AS tracked,
         events, pairs
  FROM (SELECT s.*, ((SELECT slots FROM name_map) ->> (s.app_id || ' ' || s.name))::smallint AS slot FROM custom_summary s) s
), custom_pair_values AS (
  -- counted first, so the catalog is checked once per property value of a day, not once per event
  SELECT p.*, ${inCatalog(VALUE, ['name', 'property', 'value'], 'p')} AS value_known
  FROM (
    SELECT app_id, day, name, property, value, sum(events) AS events FROM (
      SELECT s.app_id, s.day, s.name, ${CUSTOM_PAIR.select('v')}
      FROM custom_summary_named s CROSS JOIN LATERAL jsonb_array_elements(s.pairs) AS v WHERE s.tracked) AS pairs
    GROUP BY 1, 2, 3, 4, 5) p
), custom_property_probes AS MATERIALIZED (
  -- a value in the catalog has its property there (a value is added only under a tracked property, and the catalog
  -- loses entries only with its app): a property is probed only when the catalog lacks some of its values, and once,
  -- however many such values it brings
  SELECT u.*, ${inCatalog(PROPERTY, ['name', 'property'], 'u')} AS known
  FROM (SELECT DISTINCT app_id, name, property FROM custom_pair_values WHERE NOT value_known) u
), custom_pairs AS (
  SELECT v.*, v.value_known OR coalesce(k.known, false) AS property_known
  FROM custom_pair_values v
  LEFT JOIN custom_property_probes k ON k.app_id = v.app_id AND k.name = v.name AND k.property = v.property
), ${catalogLevel('custom_properties', 'custom_pairs', 'property_known', PROPERTY, ['name', 'property'], MAX_CUSTOM_PROPERTIES)}, custom_tracked_pairs AS (
  SELECT p.* FROM custom_pairs p WHERE ${tracked('property_known', ['name', 'property'], 'p', 'custom_properties')}
), ${catalogLevel('custom_values', 'custom_tracked_pairs', 'value_known', VALUE, ['name', 'property', 'value'], MAX_CUSTOM_VALUES)}, custom_counts AS (
  INSERT INTO daily_custom_events AS e (app_id, day, name, events)
  SELECT app_id, day, name, sum(events) FROM custom_summary_named
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (app_id, day, name) DO UPDATE SET events = e.events + excluded.events
), custom_value_counts AS (
  INSERT INTO daily_custom_values AS v (app_id, day, name, property, value, events)
  SELECT p.app_id, p.day, p.name, p.property,
         CASE WHEN ${tracked('value_known', ['name', 'property', 'value'], 'p', 'custom_values')} THEN p.value ELSE '${OTHER}' END,
         sum(p.events)
  FROM custom_tracked_pairs p
  GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (app_id, day, name, property, value) DO UPDATE SET events = v.events + excluded.events
)`;
}

export const CUSTOM_EVENTS = defineRollup({
  name: 'custom events',
  tables: [
    {
      // names, properties and values stay, but for those only the erased user sent and values no day counts any more
      name: 'custom_catalog',
      keyedBy: 'app',
      retention: KEPT,
      erasure: {
        kind: 'rewritten',
        how: 'names, properties and values only the user sent, and values no day counts any more, leave the catalog',
      },
    },
    {
      name: 'daily_custom_events',
      keyedBy: 'day',
      retention: KEPT,
      erasure: { kind: 'rewritten', how: "the user's events leave the counts; a name only the user sent leaves" },
    },
    {
      name: 'daily_custom_values',
      keyedBy: 'day',
      retention: KEPT,
      erasure: {
        kind: 'rewritten',
        how: "the user's events leave the counts; a property or value only the user sent leaves",
      },
    },
  ],
  sql: customEventsSql,
  insightsOnly: true,
  preAggregated: REQUEST_SUMMARY,
  readBy: ['src/events/read/insights.ts (custom events, property values)'],
});

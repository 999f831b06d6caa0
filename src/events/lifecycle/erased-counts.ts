// The erased user's part of the counts that carry text (sessions per launch attribute, custom events per name and
// property value), taken out as the erase walks their events, and the rows it leaves empty deleted.
import {
  customDataObjectSql,
  customNameSql,
  cutTextSql,
  isPropertySql,
  OTHER,
  propertyValueSql,
} from '../custom-events.ts';
import { CATALOG_LEVEL } from '../write/rollups/custom-events.ts';

/**
 * CTEs of the erase's walk step over `mine` (the user's events of the step: event_key, session_id, day, event_name):
 * `mine_sessions`, the user's sessions as daily_sessions counted them (the step deletes those rows), and
 * `mine_custom` / `mine_pairs`, their custom events and property values as the rollups counted them
 */
export const MINE_ROLLED_UP = `mine_sessions AS (
  SELECT s.day, s.platform, s.locale, s.start_param FROM daily_sessions s
  WHERE s.app_id = {{app}} AND s.session_id IN (SELECT session_id FROM mine)
), mine_custom AS (
  SELECT m.day, ${customNameSql("e.props->'custom_data'")} AS name,
         ${customDataObjectSql("e.props->'custom_data'")} AS data
  FROM mine m JOIN events e ON e.app_id = {{app}} AND e.event_key = m.event_key
  WHERE m.event_name = 'custom-event'
), mine_pairs AS (
  SELECT c.day, c.name, ${cutTextSql('p.key')} AS property, ${propertyValueSql('p.value')} AS value, count(*) AS events
  FROM mine_custom c CROSS JOIN LATERAL jsonb_each(c.data) AS p(key, value)
  WHERE ${isPropertySql('p')}
  GROUP BY 1, 2, 3, 4
)`;

/** whether the catalog tracks the name (alias.name), so the rollups counted it under its own name */
const trackedName = (alias: string) =>
  `EXISTS (SELECT 1 FROM custom_catalog k WHERE k.app_id = {{app}} AND k.level = ${CATALOG_LEVEL.name}
           AND k.name = ${alias}.name AND k.property = '' AND k.value = '' AND k.slot IS NOT NULL)`;

/** whether the catalog tracks the value (alias.name, property, value), so the rollups counted it as itself */
const trackedValue = (alias: string) =>
  `EXISTS (SELECT 1 FROM custom_catalog k WHERE k.app_id = {{app}} AND k.level = ${CATALOG_LEVEL.value}
           AND k.name = ${alias}.name AND k.property = ${alias}.property AND k.value = ${alias}.value)`;

/**
 * CTEs of the walk step taking the user's sessions and custom events out of the counts, where the rollups counted them
 * (a name or value beyond the catalog's bounds under OTHER): each an upsert of negative counts in key order, as the
 * loader's commits add theirs, so the two never lock rows in opposite orders. Only rows that exist are touched, and
 * never below zero; rows brought to zero are deleted after the walk (DROP_EMPTIED).
 */
export const COUNTS_WITHOUT_USER = `dimensions_less AS (
  INSERT INTO daily_dimensions AS d (app_id, day, dimension, value, sessions)
  SELECT {{app}}, s.day, x.dimension, x.value, -count(*)
  FROM mine_sessions s
  CROSS JOIN LATERAL (VALUES ('platform', s.platform), ('locale', s.locale), ('start_param', s.start_param)) AS x(dimension, value)
  WHERE EXISTS (SELECT 1 FROM daily_dimensions t WHERE t.app_id = {{app}} AND t.day = s.day AND t.dimension = x.dimension
                AND t.value = x.value)
  GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
  ON CONFLICT (app_id, day, dimension, value) DO UPDATE SET sessions = greatest(d.sessions + excluded.sessions, 0)
), custom_events_less AS (
  INSERT INTO daily_custom_events AS c (app_id, day, name, events)
  SELECT {{app}}, n.day, n.name, -count(*)
  FROM (SELECT m.day, CASE WHEN ${trackedName('m')} THEN m.name ELSE '${OTHER}' END AS name FROM mine_custom m) n
  WHERE EXISTS (SELECT 1 FROM daily_custom_events t WHERE t.app_id = {{app}} AND t.day = n.day AND t.name = n.name)
  GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
  ON CONFLICT (app_id, day, name) DO UPDATE SET events = greatest(c.events + excluded.events, 0)
), custom_values_less AS (
  INSERT INTO daily_custom_values AS v (app_id, day, name, property, value, events)
  SELECT {{app}}, n.day, n.name, n.property, n.value, -sum(n.events)
  FROM (SELECT p.day, p.name, p.property, CASE WHEN ${trackedValue('p')} THEN p.value ELSE '${OTHER}' END AS value,
               p.events
        FROM mine_pairs p) n
  WHERE EXISTS (SELECT 1 FROM daily_custom_values t WHERE t.app_id = {{app}} AND t.day = n.day AND t.name = n.name
                AND t.property = n.property AND t.value = n.value)
  GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
  ON CONFLICT (app_id, day, name, property, value) DO UPDATE SET events = greatest(v.events + excluded.events, 0)
)`;

/**
 * The app's rows the erase emptied (the only rows without sessions or events), and the catalog's values no day counts
 * any more (their places then take new values)
 */
export const DROP_EMPTIED = `
WITH emptied_dimensions AS (
  DELETE FROM daily_dimensions WHERE app_id = {{app}} AND sessions <= 0 RETURNING 1
), emptied_events AS (
  DELETE FROM daily_custom_events WHERE app_id = {{app}} AND events <= 0 RETURNING 1
), emptied AS (
  DELETE FROM daily_custom_values WHERE app_id = {{app}} AND events <= 0 RETURNING name, property, value
), untracked AS (
  DELETE FROM custom_catalog c USING (SELECT DISTINCT name, property, value FROM emptied) g
  WHERE c.app_id = {{app}} AND c.level = ${CATALOG_LEVEL.value} AND c.name = g.name AND c.property = g.property
    AND c.value = g.value
    AND NOT EXISTS (SELECT 1 FROM daily_custom_values v WHERE v.app_id = {{app}} AND v.name = g.name
                    AND v.property = g.property AND v.value = g.value AND v.events > 0)
  RETURNING 1
)
SELECT (SELECT count(*)::int FROM emptied_dimensions) + (SELECT count(*)::int FROM emptied_events)
       + (SELECT count(*)::int FROM untracked) AS n`;

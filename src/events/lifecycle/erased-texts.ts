// The texts an erased user sent themselves (launch attributes, custom event names, property names and values): gathered
// from their events as the erase walks them; those no other user of the app sent leave every rollup and the custom
// event catalog, so no table and no answer keeps them. Those others sent stay, counted without the user.
import { named } from '../../db/named-sql.ts';
import type { SqlRunner } from '../../db/sql.ts';
import {
  customDataObjectSql,
  customNameSql,
  cutTextSql,
  isPropertySql,
  NO_NAME,
  OTHER,
  propertyValueSql,
  rollupText,
} from '../custom-events.ts';
import { CATALOG_LEVEL } from '../write/rollups/custom-events.ts';
import { retriedOnDeadlock } from './deadlock-retry.ts';

/** what a text is, each kept as a tuple of texts as the rollups keep them (cut, '' for an absent attribute) */
const TEXT_KINDS = ['dimensions', 'names', 'properties', 'values'] as const;
type TextKind = (typeof TEXT_KINDS)[number];

/**
 * A user's texts: dimensions [dimension, value] (platform, locale, start_param as daily_dimensions keeps them), names
 * [name], properties [name, property], values [name, property, value]
 */
export type UserTexts = Record<TextKind, string[][]>;

const noTexts = (): UserTexts => ({ dimensions: [], names: [], properties: [], values: [] });

const countOf = (texts: UserTexts) => TEXT_KINDS.reduce((sum, kind) => sum + texts[kind].length, 0);

/** texts as statements answer them: a JSON array of tuples per kind, or null for none */
export type FoundTexts = Partial<Record<TextKind, string[][] | null>>;

/** texts gathered step after step, each once */
export class GatheredTexts {
  private readonly seen = new Map<TextKind, Map<string, string[]>>(TEXT_KINDS.map((kind) => [kind, new Map()]));

  add(found: FoundTexts): void {
    for (const kind of TEXT_KINDS)
      for (const text of found[kind] ?? []) this.seen.get(kind)!.set(JSON.stringify(text), text);
  }

  get texts(): UserTexts {
    return Object.fromEntries(
      TEXT_KINDS.map((kind) => [kind, [...this.seen.get(kind)!.values()]]),
    ) as unknown as UserTexts;
  }
}

/** the texts of `texts` that are not among `found` */
function without(texts: UserTexts, found: FoundTexts): UserTexts {
  const left = noTexts();
  for (const kind of TEXT_KINDS) {
    const gone = new Set((found[kind] ?? []).map((text) => JSON.stringify(text)));
    left[kind] = texts[kind].filter((text) => !gone.has(JSON.stringify(text)));
  }
  return left;
}

/** the named parameters carrying texts, one JSON array per kind */
const textValues = (texts: UserTexts) =>
  Object.fromEntries(TEXT_KINDS.map((kind) => [`${kind}_texts`, JSON.stringify(texts[kind])]));

/** SQL: the texts of one kind, as rows of their columns */
function listed(kind: TextKind, columns: readonly string[]): string {
  const picked = columns.map((column, i) => `w->>${i} AS ${column}`).join(', ');
  return `(SELECT ${picked} FROM jsonb_array_elements({{${kind}_texts}}::text::jsonb) AS w)`;
}

const DIMENSION_COLUMNS = ['dimension', 'value'] as const;
const NAME_COLUMNS = ['name'] as const;
const PROPERTY_COLUMNS = ['name', 'property'] as const;
const VALUE_COLUMNS = ['name', 'property', 'value'] as const;

/** SQL: an event's launch attributes (alias.platform, locale, start_param) as daily_dimensions keeps them */
const dimensionsOf = (alias: string) =>
  `(VALUES ('platform', ${rollupText(`${alias}.platform`)}), ('locale', ${rollupText(`${alias}.locale`)}),
           ('start_param', ${rollupText(`${alias}.start_param`)})) AS x(dimension, value)`;

/** SQL: the distinct tuples of a select's columns as a JSON array (null for none) */
const tuples = (columns: readonly string[]) => `jsonb_agg(DISTINCT jsonb_build_array(${columns.join(', ')}))`;

/**
 * Columns of the erase's walk step: the texts of the user's events (`mine` with their launch attributes, `mine_custom`,
 * `mine_pairs`: src/events/lifecycle/erased-counts.ts). OTHER and NO_NAME are the service's own words and an absent
 * attribute ('') says nothing: none of them is ever a text of the user's.
 */
export const WALK_TEXTS = `(SELECT ${tuples(['x.dimension', 'x.value'])} FROM mine m CROSS JOIN LATERAL ${dimensionsOf('m')}
        WHERE x.value <> '') AS dimensions,
       (SELECT ${tuples(['name'])} FROM mine_custom WHERE name NOT IN ('${OTHER}', '${NO_NAME}')) AS names,
       (SELECT ${tuples(['name', 'property'])} FROM mine_pairs WHERE name <> '${OTHER}' AND property <> '${OTHER}') AS properties,
       (SELECT ${tuples(['name', 'property', 'value'])} FROM mine_pairs
        WHERE name <> '${OTHER}' AND property <> '${OTHER}' AND value <> '${OTHER}') AS "values"`;

/**
 * Of the texts, those a rollup row or the catalog still holds (the walk's counts left the others at zero, deleted
 * since): only they are looked for in other users' events. A property's or value's rows exist only while the catalog
 * tracks it, so the catalog's index answers for them (the values' rows have no index without the day).
 */
const STILL_HELD = `
SELECT (SELECT ${tuples(['d.dimension', 'd.value'])} FROM ${listed('dimensions', DIMENSION_COLUMNS)} d
        WHERE EXISTS (SELECT 1 FROM daily_dimensions t WHERE t.app_id = {{app}} AND t.dimension = d.dimension
                      AND t.value = d.value)) AS dimensions,
       (SELECT ${tuples(['n.name'])} FROM ${listed('names', NAME_COLUMNS)} n
        WHERE EXISTS (SELECT 1 FROM custom_catalog t WHERE t.app_id = {{app}}
                      AND t.level IN (${CATALOG_LEVEL.name}, ${CATALOG_LEVEL.property}, ${CATALOG_LEVEL.value}) AND t.name = n.name)
           OR EXISTS (SELECT 1 FROM daily_custom_events t WHERE t.app_id = {{app}} AND t.name = n.name)) AS names,
       (SELECT ${tuples(['p.name', 'p.property'])} FROM ${listed('properties', PROPERTY_COLUMNS)} p
        WHERE EXISTS (SELECT 1 FROM custom_catalog t WHERE t.app_id = {{app}}
                      AND t.level IN (${CATALOG_LEVEL.property}, ${CATALOG_LEVEL.value})
                      AND t.name = p.name AND t.property = p.property)) AS properties,
       (SELECT ${tuples(['v.name', 'v.property', 'v.value'])} FROM ${listed('values', VALUE_COLUMNS)} v
        WHERE EXISTS (SELECT 1 FROM custom_catalog t WHERE t.app_id = {{app}} AND t.level = ${CATALOG_LEVEL.value}
                      AND t.name = v.name AND t.property = v.property AND t.value = v.value)) AS "values"`;

/**
 * The next `rows` events of the app after the key `after` (base64; '' at the start): which of the texts other users'
 * events among them carry. `pair_names` are the names whose properties are looked for, so only their events' custom
 * data is listed.
 */
const SHARED_IN_EVENTS = `
WITH range AS (
  SELECT event_key, user_key, platform, locale, start_param, event_name = 'custom-event' AS custom,
         CASE WHEN event_name = 'custom-event' THEN props->'custom_data' END AS custom_data
  FROM events WHERE app_id = {{app}} AND event_key > decode({{after}}, 'base64') ORDER BY event_key LIMIT {{rows}}
), others AS (
  SELECT * FROM range WHERE user_key <> decode({{user}}, 'base64')
), custom AS (
  SELECT ${customNameSql('o.custom_data')} AS name, ${customDataObjectSql('o.custom_data')} AS data FROM others o WHERE o.custom
), pairs AS (
  SELECT DISTINCT c.name, ${cutTextSql('p.key')} AS property, ${propertyValueSql('p.value')} AS value
  FROM custom c CROSS JOIN LATERAL jsonb_each(c.data) AS p(key, value)
  WHERE c.name IN (SELECT w->>0 FROM jsonb_array_elements({{pair_names}}::text::jsonb) AS w) AND ${isPropertySql('p')}
)
SELECT (SELECT encode(event_key, 'base64') FROM range ORDER BY event_key DESC LIMIT 1) AS last,
       (SELECT count(*)::int FROM range) AS read,
       (SELECT ${tuples(['x.dimension', 'x.value'])} FROM others o CROSS JOIN LATERAL ${dimensionsOf('o')}
        WHERE (x.dimension, x.value) IN ${listed('dimensions', DIMENSION_COLUMNS)}) AS dimensions,
       (SELECT ${tuples(['name'])} FROM custom WHERE name IN ${listed('names', NAME_COLUMNS)}) AS names,
       (SELECT ${tuples(['name', 'property'])} FROM pairs WHERE (name, property) IN ${listed('properties', PROPERTY_COLUMNS)}) AS properties,
       (SELECT ${tuples(['name', 'property', 'value'])} FROM pairs
        WHERE (name, property, value) IN ${listed('values', VALUE_COLUMNS)}) AS "values"`;

/**
 * The next `rows` users of the app after the key `after` (base64): which of the launch attributes other users were
 * first seen with (app_users), which outlive their events when the retention purge deletes those
 */
const SHARED_IN_USERS = `
WITH range AS (
  SELECT user_key, platform, locale, campaign AS start_param FROM app_users
  WHERE app_id = {{app}} AND user_key > decode({{after}}, 'base64') ORDER BY user_key LIMIT {{rows}}
)
SELECT (SELECT encode(user_key, 'base64') FROM range ORDER BY user_key DESC LIMIT 1) AS last,
       (SELECT count(*)::int FROM range) AS read,
       (SELECT ${tuples(['x.dimension', 'x.value'])} FROM range o CROSS JOIN LATERAL ${dimensionsOf('o')}
        WHERE o.user_key <> decode({{user}}, 'base64')
          AND (x.dimension, x.value) IN ${listed('dimensions', DIMENSION_COLUMNS)}) AS dimensions`;

/** the texts' rows and catalog entries: every day's, under a name, property or value only the user sent */
const DROP_TEXTS = `
WITH gone_dimensions AS (
  DELETE FROM daily_dimensions t USING ${listed('dimensions', DIMENSION_COLUMNS)} d
  WHERE t.app_id = {{app}} AND t.dimension = d.dimension AND t.value = d.value RETURNING 1
), gone_events AS (
  DELETE FROM daily_custom_events t USING ${listed('names', NAME_COLUMNS)} n
  WHERE t.app_id = {{app}} AND t.name = n.name RETURNING 1
), gone_values AS (
  DELETE FROM daily_custom_values t
  WHERE t.app_id = {{app}} AND (t.name IN (SELECT name FROM ${listed('names', NAME_COLUMNS)} n)
    OR (t.name, t.property) IN (SELECT name, property FROM ${listed('properties', PROPERTY_COLUMNS)} p)
    OR (t.name, t.property, t.value) IN (SELECT name, property, value FROM ${listed('values', VALUE_COLUMNS)} v))
  RETURNING 1
), gone_catalog AS (
  -- a name's slot is not handed out again (the next free slot only grows): the bit stays unused
  DELETE FROM custom_catalog t
  WHERE t.app_id = {{app}} AND t.level IN (${CATALOG_LEVEL.name}, ${CATALOG_LEVEL.property}, ${CATALOG_LEVEL.value})
    AND (t.name IN (SELECT name FROM ${listed('names', NAME_COLUMNS)} n)
      OR (t.level <> ${CATALOG_LEVEL.name} AND (t.name, t.property) IN (SELECT name, property FROM ${listed('properties', PROPERTY_COLUMNS)} p))
      OR (t.level = ${CATALOG_LEVEL.value}
          AND (t.name, t.property, t.value) IN (SELECT name, property, value FROM ${listed('values', VALUE_COLUMNS)} v)))
  RETURNING 1
)
SELECT (SELECT count(*)::int FROM gone_dimensions) + (SELECT count(*)::int FROM gone_events)
       + (SELECT count(*)::int FROM gone_values) + (SELECT count(*)::int FROM gone_catalog) AS n`;

type Step = { last: string | null; read: number } & FoundTexts;

/**
 * The texts a chunked statement (SHARED_IN_EVENTS, SHARED_IN_USERS) does not find: run chunk after chunk with the
 * texts still looked for, until none is or the rows end
 */
async function notFoundIn(
  sql: SqlRunner,
  statement: string,
  values: Record<string, unknown>,
  texts: UserTexts,
  chunkRows: number,
): Promise<UserTexts> {
  let left = texts;
  let after = '';
  while (countOf(left) > 0) {
    const pairNames = [...new Set([...left.properties, ...left.values].map(([name]) => name))].map((name) => [name]);
    const [step] = (await sql.query<Step>(
      ...named(statement, {
        ...values,
        after,
        rows: chunkRows,
        ...textValues(left),
        pair_names: JSON.stringify(pairNames),
      }),
    )) as [Step];
    left = without(left, step);
    if (step.last === null || step.read < chunkRows) break;
    after = step.last;
  }
  return left;
}

/**
 * Takes the texts only the erased user sent out of the app's rollups and catalog; returns how many rows and entries
 * went. Runs once their events are deleted: a text of theirs is looked for among the events left, other users', and a
 * launch attribute also among the attributes other users were first seen with.
 */
export async function dropTextsOfUser(
  sql: SqlRunner,
  appId: number,
  userKey: Buffer,
  texts: UserTexts,
  chunkRows: number,
): Promise<number> {
  if (countOf(texts) === 0) return 0;
  const [held] = (await sql.query<FoundTexts>(...named(STILL_HELD, { app: appId, ...textValues(texts) }))) as [
    FoundTexts,
  ];
  const candidates = noTexts();
  for (const kind of TEXT_KINDS) candidates[kind] = held[kind] ?? [];
  const key = { app: appId, user: userKey.toString('base64') };
  const unsent = await notFoundIn(sql, SHARED_IN_EVENTS, key, candidates, chunkRows);
  const dimensions = await notFoundIn(
    sql,
    SHARED_IN_USERS,
    key,
    { ...noTexts(), dimensions: unsent.dimensions },
    chunkRows,
  );
  const only = { ...unsent, dimensions: dimensions.dimensions };
  if (countOf(only) === 0) return 0;
  const [{ n }] = (await retriedOnDeadlock(() =>
    sql.query<{ n: number }>(...named(DROP_TEXTS, { app: appId, ...textValues(only) })),
  )) as [{ n: number }];
  return n;
}

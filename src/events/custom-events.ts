// Custom events as the insights count them: the event's name is custom_data.name of a custom-event (what the SDK's
// trackEvent(name, data) sends), its properties are custom_data's other top-level scalar fields. What is tracked
// per app is bounded, so one noisy app cannot grow the tables without end: the first names, properties and values
// an app sends are tracked, and whatever comes beyond the limits is counted as OTHER.

/** distinct custom event names tracked per app */
export const MAX_CUSTOM_NAMES = 100;
/** distinct custom_data properties tracked per custom event name */
export const MAX_CUSTOM_PROPERTIES = 20;
/** distinct values tracked per property of a custom event */
export const MAX_CUSTOM_VALUES = 100;
/** text kept in rollup keys (launch attributes, custom names, properties and values) is cut to this many characters */
export const ROLLUP_TEXT_LENGTH = 64;

/** a text cut to the rollups' length in characters, as PostgreSQL's left() cuts it */
export function cutText(text: string): string {
  if (text.length <= ROLLUP_TEXT_LENGTH) return text;
  const characters = Array.from(text);
  return characters.length <= ROLLUP_TEXT_LENGTH ? text : characters.slice(0, ROLLUP_TEXT_LENGTH).join('');
}

/** the name, property or value standing for everything beyond the limits */
export const OTHER = '(other)';
/** the name of a custom-event sent without a custom_data.name */
export const NO_NAME = '(no name)';

/** a launch attribute as the rollups keep it: '' when absent, cut so a hostile client cannot blow up cardinality */
export const rollupText = (column: string) => `left(coalesce(${column}, ''), ${ROLLUP_TEXT_LENGTH})`;

/** the name of a custom event with these props, as counted (customNameSql) */
export function customEventName(props: Record<string, unknown>): string {
  const data = props.custom_data as Record<string, unknown> | null | undefined;
  const name = data !== null && typeof data === 'object' ? data.name : undefined;
  return typeof name === 'string' ? cutText(name) : NO_NAME;
}

/** SQL: the name of a custom event whose custom_data is `data`, as counted; `otherwise` when it has none */
export const customNameSql = (data: string, otherwise = `'${NO_NAME}'`) =>
  `CASE WHEN jsonb_typeof(${data}->'name') = 'string' THEN left(${data}->>'name', ${ROLLUP_TEXT_LENGTH}) ELSE ${otherwise} END`;

/** SQL: a text (a property's name) cut as the rollups keep it */
export const cutTextSql = (text: string) => `left(${text}, ${ROLLUP_TEXT_LENGTH})`;

/** SQL: custom_data (jsonb) as an object whose fields can be listed; '{}' when it is not an object */
export const customDataObjectSql = (data: string) =>
  `CASE WHEN jsonb_typeof(${data}) = 'object' THEN ${data} ELSE '{}'::jsonb END`;

/** SQL: whether a custom_data field (`field`.key, `field`.value) is counted as a property: a scalar, not the name */
export const isPropertySql = (field: string) =>
  `${field}.key <> 'name' AND jsonb_typeof(${field}.value) IN ('string', 'number', 'boolean')`;

/** SQL: a scalar custom_data value (jsonb) as counted: a string as it is, a number or boolean as written in JSON */
export const propertyValueSql = (value: string) =>
  `left(CASE jsonb_typeof(${value}) WHEN 'string' THEN ${value} #>> '{}' ELSE ${value}::text END, ${ROLLUP_TEXT_LENGTH})`;

/** the bit of daily_users.custom_names standing for OTHER; a tracked name's bit is its catalog slot (0 up to the limit) */
export const OTHER_SLOT = MAX_CUSTOM_NAMES;
/** the width of daily_users.custom_names */
export const CUSTOM_NAME_BITS = 128;
/** SQL: no custom event name */
export const NO_CUSTOM_NAMES = `B'0'::bit(${CUSTOM_NAME_BITS})`;

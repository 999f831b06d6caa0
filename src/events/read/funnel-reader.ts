// An owner's funnel: who did step 1 in the period, then step 2 after it within the window, and so on. Read from the
// steps' funnel postings (never the app's other events) and walked here, person by person; a step narrowed by a
// property checks its candidate events' custom_data by their keys.
import { named } from '../../db/named-sql.ts';
import type { SqlReader } from '../../db/sql.ts';
import { EVENT_NAMES } from '../request/names.ts';
import { type Filter, filterConditions, filterValues, firstSeenColumns } from './filters.ts';
import { cutText } from '../custom-events.ts';
import {
  type AttributeFilter,
  byTime,
  CUSTOM_STEP_PREFIX,
  decodePostings,
  eventKeyOf,
  type PostingEvent,
} from '../write/funnel-posting-format.ts';
import type { Period } from '../days.ts';

export interface FunnelQuery {
  steps: string[];
  by: 'user' | 'session';
  windowMs: number;
}

export interface FunnelStepResult {
  name: string;
  count: number;
  /** median seconds from the previous step to this one, among those who reached it; null for the first step or none */
  median_seconds_from_previous: number | null;
}

/** a step as written: an event name, optionally narrowed to events whose custom_data has a property's value */
export interface FunnelStep {
  name: string;
  property?: string;
  value?: string;
}

const STEP_WITH_PROPERTY = /^(.+)\[([^=\]]+)=([^\]]*)\]$/;

/** "name" or "name[property=value]" */
function parseFunnelStep(text: string): FunnelStep {
  const match = STEP_WITH_PROPERTY.exec(text);
  return match ? { name: match[1]!.trim(), property: match[2]!.trim(), value: match[3]! } : { name: text };
}

/** any custom event, whatever its name */
const ANY_CUSTOM = 'custom-event';
/** the first text after every one that starts with CUSTOM_STEP_PREFIX (its last character, ':', plus one) */
const CUSTOM_STEP_BOUND = `${CUSTOM_STEP_PREFIX.slice(0, -1)};`;

/** the postings step a step reads: the service's own event name, or a custom event's; null for any custom event */
const postingStep = (step: FunnelStep) =>
  step.name === ANY_CUSTOM
    ? null
    : EVENT_NAMES.includes(step.name)
      ? step.name
      : CUSTOM_STEP_PREFIX + cutText(step.name);

/** whether a postings row of `rowStep` holds events of the step */
const holds = (step: FunnelStep, rowStep: string) =>
  step.name === ANY_CUSTOM ? rowStep.startsWith(CUSTOM_STEP_PREFIX) : rowStep === postingStep(step);

/** whether one event could match both steps: the same name (unless two values of one property), or any custom event and a custom event's name */
function stepsOverlap(a: FunnelStep, b: FunnelStep): boolean {
  if (postingStep(a) === postingStep(b))
    return !(a.property !== undefined && a.property === b.property && (a.value ?? '') !== (b.value ?? ''));
  const custom = (step: FunnelStep) => step.name === ANY_CUSTOM || postingStep(step)!.startsWith(CUSTOM_STEP_PREFIX);
  return (a.name === ANY_CUSTOM && custom(b)) || (b.name === ANY_CUSTOM && custom(a));
}

/** those of `events` whose custom_data has the step's property value, looked up by their keys in chunks */
async function withProperty(
  sql: SqlReader,
  appId: number,
  step: FunnelStep,
  events: PostingEvent[],
): Promise<PostingEvent[]> {
  const CHUNK = 5_000;
  const matching = new Set<string>();
  const keyOf = (event: PostingEvent) => eventKeyOf(event).toString('base64');
  const keys = [...new Set(events.map(keyOf))];
  for (let from = 0; from < keys.length; from += CHUNK) {
    const rows = await sql.query<{ key: string }>(
      ...named(
        `SELECT encode(event_key, 'base64') AS key FROM events
         WHERE app_id = {{app}} AND event_key IN (SELECT decode(k, 'base64') FROM jsonb_array_elements_text({{keys}}::jsonb) AS k)
           AND jsonb_extract_path_text(props->'custom_data', {{property}}) = {{value}}`,
        {
          app: appId,
          keys: JSON.stringify(keys.slice(from, from + CHUNK)),
          property: step.property,
          value: step.value ?? '',
        },
      ),
    );
    for (const { key } of rows) matching.add(key);
  }
  return events.filter((event) => matching.has(keyOf(event)));
}

interface PostingsRow {
  step: string;
  day: string;
  entries: Uint8Array;
}

/** a select's postings rows (step, day, entries), its $n the texts: as bytes by a binary COPY where the store has it */
async function postingsRows(sql: SqlReader, select: string, texts: string[]): Promise<PostingsRow[]> {
  if (!sql.copyBinary) return sql.query<PostingsRow>(select, texts);
  const rows = await sql.copyBinary(select, ['step', 'day', 'entries'], texts);
  return rows.map(({ step, day, entries }) => ({
    step: step!.toString('utf8'),
    day: day!.toString('latin1'),
    entries: entries!,
  }));
}

/** the steps' postings rows in the period, per step */
async function stepRows(sql: SqlReader, appId: number, period: Period, steps: FunnelStep[]): Promise<PostingsRow[][]> {
  // one statement (a page asks for several funnels' worth of reads at once, and the store lets a bounded number wait):
  // the primary key (app, step, day) read for the named steps, and for any custom event the range of every custom
  // event's name, which holds the named ones too; never the app's other steps' rows
  const anyCustom = steps.some((step) => step.name === ANY_CUSTOM);
  const names = [...new Set(steps.map(postingStep))].filter(
    (name): name is string => name !== null && !(anyCustom && name.startsWith(CUSTOM_STEP_PREFIX)),
  );
  // $1 and $2 the period, $3 on the steps' names
  const select = `SELECT step, day::text AS day, entries FROM funnel_postings WHERE app_id = ${Number(appId)}
    AND day BETWEEN $1::date AND $2::date`;
  const branches = [
    ...(names.length > 0
      ? [`${select} AND step = ANY(ARRAY[${names.map((_, n) => `$${n + 3}`).join(', ')}]::text[])`]
      : []),
    ...(anyCustom ? [`${select} AND step >= '${CUSTOM_STEP_PREFIX}' AND step < '${CUSTOM_STEP_BOUND}'`] : []),
  ];
  if (branches.length === 0) return steps.map(() => []);
  const rows = await postingsRows(sql, branches.join(' UNION ALL '), [period.from, period.to, ...names]);
  return steps.map((step) => rows.filter((row) => holds(step, row.step)));
}

/** a postings row's entries as a Buffer (no copy) */
const rowBytes = (row: PostingsRow) => Buffer.from(row.entries.buffer, row.entries.byteOffset, row.entries.byteLength);

/** what a funnel reads its steps' events with */
interface StepReading {
  sql: SqlReader;
  appId: number;
  by: FunnelQuery['by'];
  attributes: AttributeFilter;
}

/** a step's events in its rows that the filter keeps, of the persons given (all when absent) */
async function stepEvents(
  reading: StepReading,
  step: FunnelStep,
  rows: PostingsRow[],
  persons?: ReadonlyMap<string, unknown>,
): Promise<PostingEvent[]> {
  const events: PostingEvent[] = [];
  for (const row of rows) {
    decodePostings(
      rowBytes(row),
      row.day,
      reading.attributes,
      reading.by,
      (at, person, entries, entryAt) => events.push({ at, person, bytes: entries, entryAt }),
      persons,
    );
  }
  return step.property === undefined ? events : withProperty(reading.sql, reading.appId, step, events);
}

/**
 * The app's persons with a launch Telegram signed, as the postings name them (16 bytes as latin1): its verified users,
 * or its verified sessions
 */
async function verifiedPersons(sql: SqlReader, appId: number, by: FunnelQuery['by']): Promise<Set<string>> {
  const rows = await sql.query<{ person: Uint8Array }>(
    by === 'user'
      ? 'SELECT DISTINCT user_key AS person FROM verified_sessions WHERE app_id = $1'
      : 'SELECT uuid_send(session_id) AS person FROM verified_sessions WHERE app_id = $1',
    [appId],
  );
  return new Set(rows.map((row) => Buffer.from(row.person).toString('latin1')));
}

/** the app's users who first arrived with a campaign (their first launch's start_param), as the postings name them */
async function campaignUsers(sql: SqlReader, appId: number, campaign: string): Promise<Set<string>> {
  const rows = await sql.query<{ person: Uint8Array }>(
    ...named(
      `SELECT user_key AS person FROM app_users a WHERE a.app_id = {{app}}${filterConditions({ campaign }, firstSeenColumns('a'))}`,
      {
        app: appId,
        ...filterValues({ campaign }),
      },
    ),
  );
  return new Set(rows.map((row) => Buffer.from(row.person).toString('latin1')));
}

/** the median as PostgreSQL's percentile_cont(0.5) computes it */
function median(values: number[]): number | null {
  if (values.length === 0) return null;
  values.sort((a, b) => a - b);
  const middle = (values.length - 1) / 2;
  const low = values[Math.floor(middle)]!;
  return low + (values[Math.ceil(middle)]! - low) * (middle - Math.floor(middle));
}

/**
 * Each person's first step-1 event in the period, then for each further step the first of their events of it at or
 * after the previous step's, within the window from step 1, that is none of the earlier steps' events (one event
 * never fills two steps; events of one millisecond in the order of their keys).
 */
export async function readOwnerFunnel(
  sql: SqlReader,
  appId: number,
  period: Period,
  query: FunnelQuery,
  filter: Filter,
): Promise<{ steps: FunnelStepResult[] }> {
  const steps = query.steps.map(parseFunnelStep);
  const rows = await stepRows(sql, appId, period, steps);
  const reading: StepReading = {
    sql,
    appId,
    by: query.by,
    // decodePostings cuts the filter's texts as the chunks' headers hold them; a campaign keeps the users it brought,
    // whatever they launched with later
    attributes: {
      ...filter,
      campaign: undefined,
      users: filter.campaign === undefined ? undefined : await campaignUsers(sql, appId, filter.campaign),
    },
  };

  /** per person of the previous step, the events they took so far */
  let reached = new Map<string, PostingEvent[]>();
  const verified = filter.verified === undefined ? undefined : await verifiedPersons(sql, appId, query.by);
  const keepFirst = (event: PostingEvent) => {
    if (verified && verified.has(event.person) !== filter.verified) return;
    const taken = reached.get(event.person);
    if (!taken) reached.set(event.person, [event]);
    else if (byTime(event, taken[0]!) < 0) taken[0] = event;
  };
  if (steps[0]!.property === undefined) {
    // each person's first event found while decoding: an object only for an event no later than the person's so far
    for (const row of rows[0]!)
      decodePostings(rowBytes(row), row.day, reading.attributes, query.by, (at, person, bytes, entryAt) => {
        const taken = reached.get(person);
        if (!taken || at <= taken[0]!.at) keepFirst({ at, person, bytes, entryAt });
      });
  } else for (const event of await stepEvents(reading, steps[0]!, rows[0]!)) keepFirst(event);
  const results: FunnelStepResult[] = [
    { name: query.steps[0]!, count: reached.size, median_seconds_from_previous: null },
  ];
  for (let k = 1; k < steps.length; k++) {
    const excluded = steps.slice(0, k).map((earlier) => stepsOverlap(earlier, steps[k]!));
    const next = new Map<string, PostingEvent[]>();
    // only the events of persons who reached the previous step are decoded (and checked for a property)
    for (const event of await stepEvents(reading, steps[k]!, rows[k]!, reached)) {
      const taken = reached.get(event.person);
      if (!taken || event.at < taken[k - 1]!.at || event.at > taken[0]!.at + query.windowMs) continue;
      if (taken.some((earlier, j) => excluded[j] && byTime(earlier, event) === 0)) continue;
      const chosen = next.get(event.person);
      if (!chosen) next.set(event.person, [...taken, event]);
      else if (byTime(event, chosen[k]!) < 0) chosen[k] = event;
    }
    const seconds = [...next.values()].map((taken) => (taken[k]!.at - taken[k - 1]!.at) / 1000);
    results.push({ name: query.steps[k]!, count: next.size, median_seconds_from_previous: median(seconds) });
    reached = next;
  }
  return { steps: results };
}

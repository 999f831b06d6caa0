// What a request's events add up to, gathered at ingest so the event insert reads a few rows per batch instead of
// every event: its users per day (their first event's time and launch attributes, the names of their custom events,
// whether they completed a wallet connection) and its custom events' counts per day and name, with their property
// values, as lines the loader merges by their bytes. A batch is stored whole (src/events/write/insert-statement.ts),
// so they describe exactly the events inserted.
import { JsonTuple } from '../../db/json-tuples.ts';
import { type NamedValues, param } from '../../db/named-sql.ts';
import { Utf8Text } from '../../db/sql.ts';
import { customEventName, cutText } from '../custom-events.ts';
import { WALLET_CONNECTION_EVENT } from '../wallet-funnel.ts';
import type { EventRow } from './event-columns.ts';
import type { GatheredBatch, Gathering } from './rollups/gathering.ts';

const NEWLINE = 0x0a;

/** a user's day as a request or a batch knows it */
interface UserDay {
  day: string;
  /** the user key, base64 */
  user: string;
  /** the first event's time (epoch ms) and launch attributes */
  firstAt: number;
  platform: string | null;
  locale: string | null;
  premium: boolean;
  startParam: string | null;
  /** the names of the user's custom events that day, as the rollups count them */
  names: string[];
  wallet: boolean;
}

/** a user day as the log and the event insert keep it: [day, user, first at, platform, locale, premium, start_param, names, wallet] */
type UserDayValues = [string, string, number, string | null, string | null, boolean, string | null, string[], boolean];

const valuesOf = (entry: UserDay): UserDayValues => [
  entry.day,
  entry.user,
  entry.firstAt,
  entry.platform,
  entry.locale,
  entry.premium,
  entry.startParam,
  entry.names,
  entry.wallet,
];

/** a user day as the event insert reads it: its app, then UserDayValues (names: a JSON array of texts) */
export const USER_DAY = new JsonTuple([
  { name: 'app_id', kind: 'int' },
  { name: 'day', kind: 'date' },
  { name: 'user_key', kind: 'base64' },
  { name: 'first_at', kind: 'epochMs' },
  { name: 'platform', kind: 'text' },
  { name: 'locale', kind: 'text' },
  { name: 'is_premium', kind: 'bool' },
  { name: 'start_param', kind: 'text' },
  { name: 'names', kind: 'text' },
  { name: 'wallet', kind: 'bool' },
] as const);

/** merges what `entry` knows into `into` (the same user and day) */
function merge(into: UserDay, entry: UserDay): void {
  if (entry.firstAt < into.firstAt) {
    into.firstAt = entry.firstAt;
    into.platform = entry.platform;
    into.locale = entry.locale;
    into.premium = entry.premium;
    into.startParam = entry.startParam;
  }
  for (const name of entry.names) if (!into.names.includes(name)) into.names.push(name);
  into.wallet ||= entry.wallet;
}

/** a user's day as a request's rows meet it, with the user's key as bytes */
type RequestUserDay = UserDay & { key: Buffer };

/** a user's day started by its first row met */
const userDayOf = (row: EventRow, user: string): RequestUserDay => ({
  key: row.userKey,
  day: row.day,
  user,
  firstAt: row.occurredAt.getTime(),
  platform: row.platform,
  locale: row.locale,
  premium: row.isPremium,
  startParam: row.startParam,
  names: [],
  wallet: false,
});

/** a request's users (one app): a UserDayValues array per user and day; `names`: with their custom events' names */
function requestUsers(rows: EventRow[], names: boolean): UserDayValues[] {
  const days = new Map<string, RequestUserDay>();
  let entry: RequestUserDay | undefined;
  for (const row of rows) {
    // a request's rows mostly follow the previous row's user and day; others are found by key
    if (entry?.day !== row.day || !(entry.key === row.userKey || entry.key.equals(row.userKey))) {
      const user = row.userKey.toString('base64');
      const key = `${row.day} ${user}`;
      entry = days.get(key);
      if (!entry) days.set(key, (entry = userDayOf(row, user)));
    }
    if (row.occurredAt.getTime() < entry.firstAt)
      Object.assign(entry, {
        firstAt: row.occurredAt.getTime(),
        platform: row.platform,
        locale: row.locale,
        premium: row.isPremium,
        startParam: row.startParam,
      });
    if (row.eventName === 'custom-event') {
      if (!names) continue;
      const name = customEventName(row.props);
      if (!entry.names.includes(name)) entry.names.push(name);
    } else if (row.eventName === WALLET_CONNECTION_EVENT) entry.wallet = true;
  }
  return [...days.values()].map(valuesOf);
}

/** a custom event name's events of a day, as an earlier log record kept them: [day, name, events, [property, value, events][]] */
type CustomCountValues = [string, string, number, [string, string, number][]];

/**
 * A number as the store's jsonb prints it: the JSON text the service wrote for it, in plain notation where JSON
 * took an exponent (PostgreSQL's numeric keeps every digit, and the scale the exponent gave)
 */
function jsonbNumberText(value: number): string {
  const text = JSON.stringify(value);
  const exponentAt = text.indexOf('e');
  if (exponentAt < 0) return text;
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = text.slice(negative ? 1 : 0, exponentAt).split('.') as [string, string?];
  const digits = whole + fraction;
  const point = whole.length + Number(text.slice(exponentAt + 1));
  const plain =
    point >= digits.length
      ? digits + '0'.repeat(point - digits.length)
      : point <= 0
        ? `0.${'0'.repeat(-point)}${digits}`
        : `${digits.slice(0, point)}.${digits.slice(point)}`;
  return (negative ? '-' : '') + plain;
}

/** a custom_data value as the rollups count it (propertyValueSql); null when it is not a string, number or boolean */
function propertyValue(value: unknown): string | null {
  if (typeof value === 'string') return cutText(value);
  if (typeof value === 'number') return Number.isFinite(value) ? cutText(jsonbNumberText(value)) : null;
  if (typeof value === 'boolean') return String(value);
  return null;
}

/**
 * How a record lists its custom events: a line per day and name, `=` then its JSON texts `"day","name"`, a tab and its
 * events, followed by a line per property value of its events, `"property","value"`, a tab and its events. JSON text
 * holds no raw newline or tab, and UTF-8 no byte of either inside a character: the loader splits the lines as bytes
 * and merges them by their texts, never parsing them, and writes the texts as they are into the event insert's JSON.
 */
const GROUP_MARK = '=';
const GROUP_MARK_CODE = GROUP_MARK.charCodeAt(0);
const ZERO = '0'.charCodeAt(0);

/** what JSON escapes in a string: a quote, a backslash, a control character or half of a surrogate pair */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters JSON escapes are what it looks for
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;

/** a string as JSON text (most need no escape: they are quoted as they are) */
const jsonText = (text: string) => (ESCAPED.test(text) ? JSON.stringify(text) : `"${text}"`);

/** a custom event line of a day and name */
const groupLine = (day: string, name: string, events: number) =>
  `${GROUP_MARK}${jsonText(day)},${jsonText(name)}\t${events}\n`;
/** a custom event line of a property value */
const pairLine = (property: string, value: string, events: number) =>
  `${jsonText(property)},${jsonText(value)}\t${events}\n`;

/** a request's custom events per day and name, with their property values, as custom event lines */
function requestCustomLines(rows: EventRow[]): string {
  const groups = new Map<string, { day: string; name: string; events: number; pairs: string }>();
  for (const row of rows) {
    if (row.eventName !== 'custom-event') continue;
    const name = customEventName(row.props);
    const key = `${row.day} ${name}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { day: row.day, name, events: 0, pairs: '' }));
    group.events++;
    const data = row.props.custom_data as Record<string, unknown> | null | undefined;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) continue;
    // custom_data is parsed JSON: a plain object whose own fields are all it has
    for (const property in data) {
      const value = property === 'name' ? null : propertyValue(data[property]);
      if (value !== null) group.pairs += pairLine(cutText(property), value, 1);
    }
  }
  let text = '';
  for (const { day, name, events, pairs } of groups.values()) text += groupLine(day, name, events) + pairs;
  return text;
}

/** custom event lines of the counts an earlier log record kept as JSON */
const linesOfCounts = (custom: CustomCountValues[]) =>
  custom
    .map(
      ([day, name, events, pairs]) =>
        groupLine(day, name, events) + pairs.map(([property, value, n]) => pairLine(property, value, n)).join(''),
    )
    .join('');

/**
 * a request's summary (one app), as its log record keeps it: its users as a JSON line, then its custom event lines;
 * for a store that keeps no insights, no custom events (none listed, and none named in the users')
 */
export function encodeRequestSummary(rows: EventRow[], insights = true): Buffer {
  return Buffer.from(
    `${JSON.stringify(requestUsers(rows, insights))}\n${insights ? requestCustomLines(rows) : ''}`,
    'utf8',
  );
}

/** a day and name's events of a batch, with its property values' events by their JSON texts */
interface CustomGroup {
  appId: number;
  /** `"day","name"`, as latin1 text of its UTF-8 bytes */
  text: string;
  events: number;
  /** each property value's events, in an array counted in place (one lookup per line) */
  pairs: Map<string, [number]>;
}

/** a batch's users by app, user and day, and its custom events by app, day and name, from its requests' records */
export class BatchSummary implements GatheredBatch {
  private readonly days = new Map<string, UserDay & { appId: number }>();
  /** by app and the JSON texts of day and name */
  private readonly custom = new Map<string, CustomGroup>();

  /** adds a request's summary (encodeRequestSummary, or the JSON [users, custom events] of an earlier record) */
  add(appId: number, summary: Buffer): void {
    const newline = summary.indexOf(NEWLINE);
    let users: UserDayValues[];
    if (newline < 0) {
      const [earlierUsers, custom] = JSON.parse(summary.toString('utf8')) as [UserDayValues[], CustomCountValues[]];
      users = earlierUsers;
      this.addCustomLines(appId, Buffer.from(linesOfCounts(custom), 'utf8').toString('latin1'));
    } else {
      users = JSON.parse(summary.toString('utf8', 0, newline)) as UserDayValues[];
      if (newline + 1 < summary.length) this.addCustomLines(appId, summary.toString('latin1', newline + 1));
    }
    for (const values of users) {
      const [day, user, firstAt, platform, locale, premium, startParam, names, wallet] = values;
      const entry = { appId, day, user, firstAt, platform, locale, premium, startParam, names, wallet };
      const key = `${appId} ${day} ${user}`;
      const known = this.days.get(key);
      if (known) merge(known, entry);
      else this.days.set(key, entry);
    }
  }

  /** merges custom event lines, read as latin1 text of their UTF-8 bytes (so a line's texts are kept byte for byte) */
  private addCustomLines(appId: number, lines: string): void {
    let group: CustomGroup | undefined;
    for (let at = 0; at < lines.length; ) {
      const end = lines.indexOf('\n', at);
      const tab = lines.lastIndexOf('\t', end);
      let events = 0;
      for (let digit = tab + 1; digit < end; digit++) events = events * 10 + lines.charCodeAt(digit) - ZERO;
      if (lines.charCodeAt(at) === GROUP_MARK_CODE) {
        const text = lines.slice(at + 1, tab);
        const key = `${appId} ${text}`;
        group = this.custom.get(key);
        if (!group) this.custom.set(key, (group = { appId, text, events: 0, pairs: new Map() }));
        group.events += events;
      } else {
        const text = lines.slice(at, tab);
        const count = group!.pairs.get(text);
        if (count) count[0] += events;
        else group!.pairs.set(text, [events]);
      }
      at = end + 1;
    }
  }

  /**
   * the event insert's parameter for users: a JSON array of [app id, ...UserDayValues], each user's names sorted, so
   * users with the same names have the same list (the insert works out each list's bits once)
   */
  usersJson(): string {
    return JSON.stringify(
      [...this.days.values()].map((entry) => {
        entry.names.sort();
        return [entry.appId, ...valuesOf(entry)];
      }),
    );
  }

  /**
   * the event insert's parameter for custom events, as UTF-8 JSON: an array of [app id, day, name, events,
   * [property, value, events][]]
   */
  customEventsJson(): Buffer {
    const parts: string[] = [];
    for (const { appId, text, events, pairs } of this.custom.values()) {
      let values = '';
      for (const [pair, [n]] of pairs) values += `${values ? ',' : ''}[${pair},${n}]`;
      parts.push(`[${appId},${text},${events},[${values}]]`);
    }
    return Buffer.from(`[${parts.join(',')}]`, 'latin1');
  }

  /** the event insert's parameters users and custom_events */
  values(): NamedValues {
    return { users: this.usersJson(), custom_events: new Utf8Text(this.customEventsJson()) };
  }
}

/**
 * The batch's users per day, as ingest gathered them (the parameter users): their first event's time and launch
 * attributes, their custom events' names and whether they completed a wallet connection
 */
const BATCH_USERS = `batch_users AS (
  SELECT ${USER_DAY.select('u')}
  FROM jsonb_array_elements(${param('users')}::jsonb) AS u
  WHERE ${USER_DAY.get('u', 'app_id')} IN (SELECT id FROM live_apps)
)`;

/** the users and custom events of each request (users, custom events): the section "summary" of its log record */
export const REQUEST_SUMMARY: Gathering = {
  section: 'summary',
  encode: encodeRequestSummary,
  batch: () => new BatchSummary(),
  pays:
    'the service ingest ratio of the custom-heavy mix (stored, with the insights / without) went from 0.76 to 1.01 × on ' +
    'PostgreSQL and from 0.71 to 0.85 × on PGlite with the request summaries and funnel postings made at ingest ' +
    '(bench/insights-load.ts; docs/bench-notes/2026-11.md, "Insights on funnel postings and request summaries")',
  inputSql: BATCH_USERS,
};

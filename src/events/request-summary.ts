// What a request's events add up to, gathered at ingest so the event insert reads a few rows per batch instead of
// every event: its users per day (their first event's time and launch attributes, the names of their custom events,
// whether they completed a wallet connection) and its custom events' counts per day and name, with their property
// values. They hold when every event of the batch is new, which the event insert checks (it reads the events it
// really inserted otherwise).
import { customEventName, cutText } from './custom-events.ts';
import { WALLET_CONNECTION_EVENT } from './funnel.ts';
import type { EventRow } from './store.ts';

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

/** a custom event name's events of a day: [day, name, events, [property, value, events][]] */
type CustomCountValues = [string, string, number, PairCount[]];

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

/** a property value's count as the summaries keep it: [property, value, events] */
type PairCount = [string, string, number];

/**
 * Counts of property values by property and value: each count's array is made once and counted in place, so a
 * summary lists them as they are
 */
class PairCounts {
  private readonly byProperty = new Map<string, Map<string, PairCount>>();
  readonly list: PairCount[] = [];

  add(property: string, value: string, events: number): void {
    let values = this.byProperty.get(property);
    if (!values) this.byProperty.set(property, (values = new Map()));
    const known = values.get(value);
    if (known) known[2] += events;
    else {
      const count: PairCount = [property, value, events];
      values.set(value, count);
      this.list.push(count);
    }
  }
}

/** a request's custom events per day and name, with their property values' counts */
function requestCustomEvents(rows: EventRow[]): CustomCountValues[] {
  const counts = new Map<string, { values: CustomCountValues; pairs: PairCounts }>();
  for (const row of rows) {
    if (row.eventName !== 'custom-event') continue;
    const name = customEventName(row.props);
    const key = `${row.day} ${name}`;
    let count = counts.get(key);
    if (!count) {
      const pairs = new PairCounts();
      counts.set(key, (count = { values: [row.day, name, 0, pairs.list], pairs }));
    }
    count.values[2]++;
    const data = row.props.custom_data as Record<string, unknown> | null | undefined;
    if (data === null || typeof data !== 'object' || Array.isArray(data)) continue;
    // custom_data is parsed JSON: a plain object whose own fields are all it has
    for (const property in data) {
      const value = property === 'name' ? null : propertyValue(data[property]);
      if (value !== null) count.pairs.add(cutText(property), value, 1);
    }
  }
  return [...counts.values()].map((count) => count.values);
}

/**
 * a request's summary (one app), as its log record keeps it: JSON, [users, custom events]; for a store that keeps no
 * insights, without custom events (none listed, and none named in the users')
 */
export function encodeRequestSummary(rows: EventRow[], insights = true): Buffer {
  return Buffer.from(JSON.stringify([requestUsers(rows, insights), insights ? requestCustomEvents(rows) : []]), 'utf8');
}

/** a batch's users by app, user and day, and its custom events by app, day and name, from its requests' records */
export class BatchSummary {
  private readonly days = new Map<string, UserDay & { appId: number }>();
  private readonly custom = new Map<
    string,
    { appId: number; day: string; name: string; events: number; pairs: PairCounts }
  >();

  /** adds a request's summary (encodeRequestSummary) */
  add(appId: number, summary: Buffer): void {
    const [users, custom] = JSON.parse(summary.toString('utf8')) as [UserDayValues[], CustomCountValues[]];
    for (const values of users) {
      const [day, user, firstAt, platform, locale, premium, startParam, names, wallet] = values;
      const entry = { appId, day, user, firstAt, platform, locale, premium, startParam, names, wallet };
      const key = `${appId} ${day} ${user}`;
      const known = this.days.get(key);
      if (known) merge(known, entry);
      else this.days.set(key, entry);
    }
    for (const [day, name, events, pairs] of custom) {
      const key = `${appId} ${day} ${name}`;
      let count = this.custom.get(key);
      if (!count) this.custom.set(key, (count = { appId, day, name, events: 0, pairs: new PairCounts() }));
      count.events += events;
      for (const [property, value, n] of pairs) count.pairs.add(property, value, n);
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

  /** the event insert's parameter for custom events: a JSON array of [app id, ...CustomCountValues] */
  customEventsJson(): string {
    return JSON.stringify(
      [...this.custom.values()].map(({ appId, day, name, events, pairs }) => [appId, day, name, events, pairs.list]),
    );
  }
}

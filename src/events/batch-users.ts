// A batch's users, gathered at ingest: per user and day, their first event's time and launch attributes, the names of
// their custom events and whether they completed a wallet connection. The per-user rollups (daily_users, app_users,
// wallet_users) come from these few rows instead of a pass over every event of the batch. Each fact only grows
// (a first event only moves earlier, a day or a name is there or not), so an event sent twice changes none of them,
// and they are taken from every event of a batch, a duplicate's too.
import { customEventName } from './custom-events.ts';
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

/** a request's users (one app), as its log record keeps them: JSON, a UserDayValues array per user and day */
export function encodeRequestUsers(rows: EventRow[]): Buffer {
  const days = new Map<string, UserDay>();
  for (const row of rows) {
    const entry: UserDay = {
      day: row.day,
      user: row.userKey.toString('base64'),
      firstAt: row.occurredAt.getTime(),
      platform: row.platform,
      locale: row.locale,
      premium: row.isPremium,
      startParam: row.startParam,
      names: row.eventName === 'custom-event' ? [customEventName(row.props)] : [],
      wallet: row.eventName === WALLET_CONNECTION_EVENT,
    };
    const key = `${entry.day} ${entry.user}`;
    const known = days.get(key);
    if (known) merge(known, entry);
    else days.set(key, entry);
  }
  return Buffer.from(JSON.stringify([...days.values()].map(valuesOf)), 'utf8');
}

/** a batch's users by app, user and day, gathered from its requests' records */
export class BatchUsers {
  private readonly days = new Map<string, UserDay & { appId: number }>();

  /** adds a request's users (encodeRequestUsers) */
  add(appId: number, users: Buffer): void {
    for (const values of JSON.parse(users.toString('utf8')) as UserDayValues[]) {
      const [day, user, firstAt, platform, locale, premium, startParam, names, wallet] = values;
      const entry = { appId, day, user, firstAt, platform, locale, premium, startParam, names, wallet };
      const key = `${appId} ${day} ${user}`;
      const known = this.days.get(key);
      if (known) merge(known, entry);
      else this.days.set(key, entry);
    }
  }

  /** the event insert's parameter: a JSON array of [app id, ...UserDayValues] */
  toJson(): string {
    return JSON.stringify([...this.days.values()].map((entry) => [entry.appId, ...valuesOf(entry)]));
  }
}

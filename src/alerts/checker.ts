// Decides what the bot tells each subscribed chat: the first event of an app, silence, a spike of refusals, a quota
// reached, the weekly digest. A condition is recorded when raised and told once; it is told again only after it
// cleared. Recording before telling makes a second checker (another node, a retry) find it already raised.
import { named } from '../db/named-sql.ts';
import type { SqlReader, SqlRunner } from '../db/sql.ts';
import { escapeTelegramHtml as escapeHtml } from '../platform/html.ts';
import { addDays, DAY_MS } from '../events/days.ts';
import type { Secrets } from '../tokens/secret.ts';
import { ChatCipher } from './chat-cipher.ts';
import { weeklyDigest } from './digest.ts';
import { FIRST_EVENT } from './subscriptions.ts';

/** the window in which refusals are weighed against accepted events */
export const REFUSAL_WINDOW_MS = 15 * 60_000;
/** fewer refusals than this in the window never alert: one odd request is not a spike */
export const MIN_REFUSALS = 10;
/** the digest of the week before goes out from this hour (UTC) on Mondays, or later that week */
const DIGEST_HOUR_UTC = 9;
/** conditions recorded per day (quota, digest) are forgotten after this long */
const DATED_STATES_KEPT_MS = 30 * DAY_MS;

export interface AlertMessage {
  chatId: string;
  text: string;
  /** one button under the message: its text and callback data */
  button?: { text: string; data: string };
}

interface SubscriptionRow {
  id: number;
  app_id: number;
  app_name: string;
  chat: string;
  silence_hours: number | null;
  refusals: boolean;
  quota: boolean;
  first_event: boolean;
  digest: boolean;
  last_event_at: Date | null;
  events_total: number;
}

interface RefusalRow {
  app_id: number;
  status: number;
  message: string;
  origin: string | null;
  reason: string | null;
  n: number;
}

const hoursText = (ms: number) => {
  const hours = Math.floor(ms / 3_600_000);
  return hours >= 48 ? `${Math.floor(hours / 24)} days` : `${hours} h`;
};

/** the data of the button that offers to add a refused domain (the domain itself stays in the condition's record) */
export const addDomainData = (subscriptionId: number) => `alert:dom:${subscriptionId}`;

export class AlertChecker {
  private readonly cipher: ChatCipher;

  constructor(
    private readonly sql: SqlRunner,
    secrets: Secrets,
    /** the counts of events and the digest's numbers, within the read budget */
    private readonly reads: SqlReader = sql,
  ) {
    this.cipher = new ChatCipher(secrets);
  }

  /** raises and clears every subscription's conditions as of `now`; returns what to tell whom */
  async check(now: Date): Promise<AlertMessage[]> {
    const subscriptions = await this.sql.query<SubscriptionRow>(
      `SELECT s.id, s.app_id, a.app_name, s.chat, s.silence_hours, s.refusals, s.quota, s.first_event, s.digest,
              act.last_event_at, coalesce(act.events_total, 0)::float8 AS events_total
       FROM alert_subscriptions s JOIN apps a ON a.id = s.app_id LEFT JOIN app_activity act ON act.app_id = s.app_id
       ORDER BY s.id`,
    );
    if (subscriptions.length === 0) return [];
    const appIds = [...new Set(subscriptions.map((row) => row.app_id))];
    const since = new Date(now.getTime() - REFUSAL_WINDOW_MS);
    const [refusals, raised] = await Promise.all([
      this.sql.query<RefusalRow>(
        ...named(
          `SELECT app_id, status, message, origin, reason, sum(count)::int AS n FROM rejections
           WHERE app_id = ANY({{apps}}::int[]) AND at > {{since}} AND at <= {{now}} GROUP BY 1, 2, 3, 4, 5 ORDER BY n DESC`,
          { apps: appIds, since, now },
        ),
      ),
      this.sql.query<{ subscription_id: number; condition: string }>(
        ...named(`SELECT subscription_id, condition FROM alert_states WHERE subscription_id = ANY({{ids}}::int[])`, {
          ids: subscriptions.map((row) => row.id),
        }),
      ),
    ]);
    // accepted events are counted only where refusals could make a spike: a busy app's window holds many events
    const refusedPerApp = new Map<number, number>();
    for (const row of refusals) refusedPerApp.set(row.app_id, (refusedPerApp.get(row.app_id) ?? 0) + row.n);
    const spikeCandidates = [...refusedPerApp].filter(([, n]) => n >= MIN_REFUSALS).map(([appId]) => appId);
    const accepted =
      spikeCandidates.length === 0
        ? []
        : await this.reads.query<{ app_id: number; n: number }>(
            ...named(
              `SELECT app_id, count(*)::int AS n FROM events WHERE app_id = ANY({{apps}}::int[]) AND received_at > {{since}}
                 AND received_at <= {{now}} GROUP BY 1`,
              { apps: spikeCandidates, since, now },
            ),
          );
    const isRaised = new Set(raised.map((row) => `${row.subscription_id}\n${row.condition}`));
    const messages: AlertMessage[] = [];
    for (const subscription of subscriptions) {
      const chatId = this.cipher.open(subscription.chat);
      const tell = (text: string, button?: AlertMessage['button']) => messages.push({ chatId, text, button });
      const was = (condition: string) => isRaised.has(`${subscription.id}\n${condition}`);
      const app = `<b>${escapeHtml(subscription.app_name)}</b>`;
      const ofApp = refusals.filter((row) => row.app_id === subscription.app_id);

      if (subscription.first_event && subscription.events_total > 0 && !was(FIRST_EVENT)) {
        if (await this.raise(subscription.id, FIRST_EVENT, now))
          tell(`✅ Your integration works: the first event of ${app} has arrived.`);
      }

      const silentFor = subscription.last_event_at ? now.getTime() - subscription.last_event_at.getTime() : 0;
      const silent = subscription.silence_hours !== null && silentFor >= subscription.silence_hours * 3_600_000;
      if (silent && !was('silence')) {
        if (await this.raise(subscription.id, 'silence', now)) {
          const lastRefusal = await this.lastRefusal(subscription.app_id);
          tell(
            `⚠️ ${app} has received no events for ${hoursText(silentFor)}.` +
              (lastRefusal ? `\nLast refused request: ${escapeHtml(lastRefusal)}.` : '') +
              '\nA changed mini app URL or domain is the usual cause: check the app in /mytokens.',
          );
        }
      } else if (!silent && was('silence') && (await this.clear(subscription.id, 'silence'))) {
        if (subscription.silence_hours !== null) tell(`✅ Events of ${app} arrive again.`);
      }

      const refused = refusedPerApp.get(subscription.app_id) ?? 0;
      const acceptedEvents = accepted.find((row) => row.app_id === subscription.app_id)?.n ?? 0;
      const spike = subscription.refusals && refused >= MIN_REFUSALS && refused > acceptedEvents;
      if (spike && !was('refusals')) {
        const top = ofApp[0]!;
        const origin = top.origin ? ` from ${escapeHtml(top.origin)}` : '';
        const host = top.status === 403 && top.origin ? hostOf(top.origin) : null;
        if (await this.raise(subscription.id, 'refusals', now, host ? { domain: host } : null)) {
          const share = Math.round((100 * refused) / (refused + acceptedEvents));
          const headline = `⚠️ ${share}% of the requests to ${app} were refused in the last 15 minutes.`;
          if (host)
            tell(`${headline}\nTop reason: 403 domain mismatch${origin}: add this domain?`, {
              text: `➕ Add ${host}`,
              data: addDomainData(subscription.id),
            });
          else tell(`${headline}\nTop reason: ${top.status} ${escapeHtml(top.reason ?? top.message)}${origin}.`);
        }
      } else if (!spike && was('refusals') && (await this.clear(subscription.id, 'refusals'))) {
        if (subscription.refusals) tell(`✅ Requests to ${app} are accepted again.`);
      }

      const quota = ofApp.find((row) => row.status === 429 && row.reason !== null);
      const today = now.toISOString().slice(0, 10);
      if (subscription.quota && quota && !was(`quota:${today}`)) {
        if (await this.raise(subscription.id, `quota:${today}`, now))
          tell(
            `⛔ ${app} reached its daily quota: ${escapeHtml(quota.reason!)}. Events beyond it are refused until 00:00 UTC.`,
          );
      }

      const week = digestWeek(now);
      if (subscription.digest && week && !was(`digest:${week}`)) {
        if (await this.raise(subscription.id, `digest:${week}`, now))
          tell(await weeklyDigest(this.reads, subscription.app_id, subscription.app_name, week));
      }
    }
    await this.sql.query(
      ...named(
        `DELETE FROM alert_states WHERE (condition LIKE 'quota:%' OR condition LIKE 'digest:%') AND raised_at < {{before}}`,
        { before: new Date(now.getTime() - DATED_STATES_KEPT_MS) },
      ),
    );
    return messages;
  }

  /** the domain a raised refusal spike offers to add, when the chat's subscription has one */
  async offeredDomain(subscriptionId: number): Promise<string | null> {
    const [row] = await this.sql.query<{ domain: string | null }>(
      ...named(
        `SELECT detail->>'domain' AS domain FROM alert_states WHERE subscription_id = {{subscription}} AND condition = 'refusals'`,
        { subscription: subscriptionId },
      ),
    );
    return row?.domain ?? null;
  }

  /** records the condition; false when it was recorded already (by another checker meanwhile) */
  private async raise(subscriptionId: number, condition: string, now: Date, detail: object | null = null) {
    const rows = await this.sql.query(
      ...named(
        `INSERT INTO alert_states (subscription_id, condition, raised_at, detail)
         VALUES ({{subscription}}, {{condition}}, {{now}}, {{detail}}::jsonb)
         ON CONFLICT DO NOTHING RETURNING 1`,
        { subscription: subscriptionId, condition, now, detail: detail === null ? null : JSON.stringify(detail) },
      ),
    );
    return rows.length > 0;
  }

  private async clear(subscriptionId: number, condition: string) {
    const rows = await this.sql.query(
      ...named(
        `DELETE FROM alert_states WHERE subscription_id = {{subscription}} AND condition = {{condition}} RETURNING 1`,
        { subscription: subscriptionId, condition },
      ),
    );
    return rows.length > 0;
  }

  private async lastRefusal(appId: number): Promise<string | null> {
    const [row] = await this.sql.query<{ status: number; message: string; origin: string | null }>(
      ...named(
        `SELECT status, message, origin FROM rejections WHERE app_id = {{app}} ORDER BY at DESC, id DESC LIMIT 1`,
        { app: appId },
      ),
    );
    return row ? `${row.status} ${row.message}${row.origin ? ` from ${row.origin}` : ''}` : null;
  }
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).hostname || null;
  } catch {
    return null;
  }
}

/** the Monday (UTC) starting the week the digest covers, once that digest is due; null before */
function digestWeek(now: Date): string | null {
  const day = now.toISOString().slice(0, 10);
  const sinceMonday = (now.getUTCDay() + 6) % 7;
  const thisMonday = addDays(day, -sinceMonday);
  if (sinceMonday === 0 && now.getUTCHours() < DIGEST_HOUR_UTC) return null;
  return addDays(thisMonday, -7);
}

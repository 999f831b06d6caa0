// Who is warned about an app and about what: one subscription per app and chat, with the owner's choices. The owner
// subscribes from the bot (a new token subscribes its chat with the defaults).
import type { PrismaClient } from '../db/store.ts';
import type { Secrets } from '../tokens/secret.ts';
import { ChatCipher } from './chat-cipher.ts';

/** the choices for the silence alert, in hours; null: off */
export const SILENCE_CHOICES = [null, 1, 6, 24] as const;
export type SilenceHours = (typeof SILENCE_CHOICES)[number];

export interface AlertSettings {
  silenceHours: SilenceHours;
  refusals: boolean;
  quota: boolean;
  firstEvent: boolean;
  digest: boolean;
}

export interface Subscription extends AlertSettings {
  id: number;
  appId: number;
}

export const FIRST_EVENT = 'first-event';

export class AlertSubscriptions {
  readonly cipher: ChatCipher;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly secrets: Secrets,
  ) {
    this.cipher = new ChatCipher(secrets);
  }

  /** the chat's keyed hash, also kept with a team member (src/tokens/members.ts) so their alerts go when they leave */
  chatKey(chatId: string): string {
    return this.secrets.shortHash('alert-chat-key', chatId);
  }

  /** the key of the first of the app's subscribed chats that `matches` (by its chat id), null when none does */
  async chatKeyWhere(appId: number, matches: (chatId: string) => boolean): Promise<string | null> {
    return (await this.chatWhere(appId, matches))?.chatKey ?? null;
  }

  /** the first of the app's subscribed chats that `matches` (by its chat id), with its key; null when none does */
  async chatWhere(
    appId: number,
    matches: (chatId: string) => boolean,
  ): Promise<{ chatId: string; chatKey: string } | null> {
    const rows = await this.prisma.alertSubscription.findMany({
      where: { appId },
      select: { chatKey: true, chat: true },
    });
    for (const row of rows) {
      const chatId = this.cipher.open(row.chat);
      if (matches(chatId)) return { chatId, chatKey: row.chatKey };
    }
    return null;
  }

  /**
   * The chat's subscription to the app, made with the defaults when there is none. An app that already has events
   * does not announce its first one.
   */
  async subscribe(appId: number, chatId: string): Promise<Subscription> {
    const chatKey = this.chatKey(chatId);
    const existing = await this.prisma.alertSubscription.findUnique({ where: { appId_chatKey: { appId, chatKey } } });
    if (existing) return toSubscription(existing);
    const created = await this.prisma.alertSubscription.upsert({
      where: { appId_chatKey: { appId, chatKey } },
      create: { appId, chatKey, chat: this.cipher.seal(chatId) },
      update: {},
    });
    const [activity] = await this.prisma.$queryRaw<{ events: number }[]>`
      SELECT events_total::float8 AS events FROM app_activity WHERE app_id = ${appId}`;
    if ((activity?.events ?? 0) > 0)
      await this.prisma.alertState.createMany({
        data: [{ subscriptionId: created.id, condition: FIRST_EVENT }],
        skipDuplicates: true,
      });
    return toSubscription(created);
  }

  /** the chat's subscription by id; null when it is another chat's or gone */
  async ofChat(id: number, chatId: string): Promise<Subscription | null> {
    const row = await this.prisma.alertSubscription.findFirst({ where: { id, chatKey: this.chatKey(chatId) } });
    return row ? toSubscription(row) : null;
  }

  async change(id: number, chatId: string, settings: Partial<AlertSettings>): Promise<Subscription | null> {
    if (settings.silenceHours !== undefined && !SILENCE_CHOICES.includes(settings.silenceHours))
      throw new Error(`silence hours must be one of ${SILENCE_CHOICES.join(', ')}`);
    const { count } = await this.prisma.alertSubscription.updateMany({
      where: { id, chatKey: this.chatKey(chatId) },
      data: settings,
    });
    return count === 0 ? null : this.ofChat(id, chatId);
  }
}

function toSubscription(row: {
  id: number;
  appId: number;
  silenceHours: number | null;
  refusals: boolean;
  quota: boolean;
  firstEvent: boolean;
  digest: boolean;
}): Subscription {
  return {
    id: row.id,
    appId: row.appId,
    silenceHours: row.silenceHours as SilenceHours,
    refusals: row.refusals,
    quota: row.quota,
    firstEvent: row.firstEvent,
    digest: row.digest,
  };
}

type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** the alert settings a client sends (JSON: silence_hours, refusals, quota, first_event, digest), each optional */
export function parseAlertSettings(body: unknown): Parsed<Partial<AlertSettings>> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { ok: false, error: 'Send the alert settings as a JSON object.' };
  const given = body as Record<string, unknown>;
  const settings: Partial<AlertSettings> = {};
  if ('silence_hours' in given) {
    const hours = given.silence_hours;
    if (!SILENCE_CHOICES.includes(hours as SilenceHours))
      return { ok: false, error: 'silence_hours must be null (off), 1, 6 or 24.' };
    settings.silenceHours = hours as SilenceHours;
  }
  const flags = { refusals: 'refusals', quota: 'quota', first_event: 'firstEvent', digest: 'digest' } as const;
  for (const [field, setting] of Object.entries(flags)) {
    if (!(field in given)) continue;
    if (typeof given[field] !== 'boolean') return { ok: false, error: `${field} must be true or false.` };
    settings[setting] = given[field] as boolean;
  }
  return { ok: true, value: settings };
}

/** a subscription as the site API answers it */
export function alertSettingsDocument(subscription: Subscription) {
  return {
    silence_hours: subscription.silenceHours,
    refusals: subscription.refusals,
    quota: subscription.quota,
    first_event: subscription.firstEvent,
    digest: subscription.digest,
    silence_choices: SILENCE_CHOICES,
  };
}

// Everything the bot says: app cards with last event and last rejection, token results with
// ready-to-paste snippets, relative times. HTML parse mode; user-supplied text is escaped.
import { type AppSummary, rejectedAfterLastEvent } from '../events/read/app-summary.ts';
import type { ErasureResult } from '../events/lifecycle/data-controls.ts';
import type { StoredOfUser } from '../events/lifecycle/user-erasure.ts';
import { rejectionReason } from '../events/request/refusals.ts';
import { firstKeptDay, retentionText, type RetentionDays } from '../events/lifecycle/retention.ts';
import type { RejectionRow } from '../events/write/event-plane.ts';
import { escapeTelegramHtml } from '../platform/html.ts';
import {
  initArgument,
  packageInstallSnippet,
  packageSnippet,
  readKeySnippet,
  scriptSnippet,
} from '../sdk-serving/integration-snippet.ts';
import { groupedNumber } from '../ranking/number-text.ts';
import { SDK_PACKAGE_NAME } from '../sdk-serving/sdk-files.ts';
import { timeAgo, utcTime } from '../platform/time-format.ts';
import { type Maker, makerText } from '../tokens/makers.ts';
import type { ReadKeyInfo } from '../tokens/read-keys.ts';
import type { AppRecord } from '../tokens/registry.ts';
import { type LaunchChecks, OUTCOME_TEXT, unverifiedOutcomes } from '../events/read/launch-checks.ts';

/** the send options of every message that carries markup */
export const HTML = { parse_mode: 'HTML' } as const;

/** text for a message in Telegram's HTML mode */
export const escapeHtml = escapeTelegramHtml;

/** a count as the bot shows it, grouped by thousands ("73,875"): the one formatter of the bot's numbers */
export const countText = (n: number) => groupedNumber(n);

/** "1 event", "73,875 events" */
export const counted = (n: number, what: string) => `${countText(n)} ${what}${n === 1 ? '' : 's'}`;

export function describeRejection(rejection: RejectionRow, now: Date): string {
  const reason = rejectionReason(rejection);
  const origin = rejection.origin ? ` from ${escapeHtml(rejection.origin)}` : '';
  return `${rejection.status} ${escapeHtml(reason)}${origin}, ${timeAgo(rejection.at, now)}`;
}

export interface AppView {
  app: AppRecord;
  summary: AppSummary;
  /** the launches of the last 7 days (on the app's own card, not in lists) */
  launches?: LaunchChecks;
}

/** most reasons a card lists for launches that did not verify */
const LISTED_REASONS = 3;

/** the app's bot id, and on its own card what its launches of the week were */
function launchLines(app: AppRecord, launches: LaunchChecks | undefined): string[] {
  if (app.botId === null)
    return [
      '⚠️ No bot id: no launch can be verified, so no user counts as verified and the app stays out of the catalog. Tap “🆔 Bot id”.',
    ];
  if (!launches) return [];
  const reasons = unverifiedOutcomes(launches)
    .slice(0, LISTED_REASONS)
    .map(({ outcome, launches: n }) => `  ${countText(n)} ${escapeHtml(OUTCOME_TEXT[outcome])}`);
  return [
    `Launches (7 days): ${countText(launches.launches)}, verified by Telegram ${countText(launches.outcomes.verified)} (${counted(launches.verifiedUsers, 'user')})`,
    ...(reasons.length > 0 ? ['Not verified:', ...reasons] : []),
  ];
}

/** one app, as shown in "My tokens" and on its own card */
export function appCard({ app, summary, launches }: AppView, now: Date): string {
  const { lastEventAt, eventsTotal, lastRejection } = summary;
  const lines = [
    `<b>${escapeHtml(app.appName)}</b> · ${escapeHtml(app.bot)}${app.botId === null ? '' : ` (id ${app.botId})`}`,
    `Domains: ${app.domains.map(escapeHtml).join(', ')}`,
    `Token: ${app.tokenPrefix ? `<code>${escapeHtml(app.tokenPrefix)}…</code> created ${utcTime(app.tokenCreatedAt!)}` : 'revoked'}`,
    `Last event: ${lastEventAt ? `${timeAgo(lastEventAt, now)} (${utcTime(lastEventAt)})` : 'no events yet'}`,
  ];
  // a member sees what they are to the app; an owner's own cards stay as they were
  if (app.role === 'editor' || app.role === 'viewer') lines.splice(1, 0, `Your role: ${app.role}`);
  if (eventsTotal > 0) lines.push(`Events recorded: ${countText(eventsTotal)}`);
  if (lastRejection && rejectedAfterLastEvent(summary)) {
    lines.push(`⚠️ Last rejected request: ${describeRejection(lastRejection, now)}`);
  }
  lines.push(...launchLines(app, launches));
  lines.push(
    app.catalogListed
      ? 'Public catalog: listed (ranked on verified users while its token works)'
      : 'Public catalog: not listed',
  );
  return lines.join('\n');
}

/** stands for the service's address in the snippets when PUBLIC_URL is not set: mini apps and integrators' machines
 * reach the service by its public address, which only the operator knows */
export const ADDRESS_PLACEHOLDER = 'https://YOUR-ANALYTICS-HOST';

/** the service's address in a snippet: PUBLIC_URL, else a placeholder (the bot's users are never on its machine) */
export const snippetBase = (publicUrl: string | undefined) => publicUrl ?? ADDRESS_PLACEHOLDER;

/** without PUBLIC_URL, how to fill in the placeholder of the snippets */
export const ADDRESS_HINT = `Replace <code>${ADDRESS_PLACEHOLDER}</code> with this service's public address (the operator sets PUBLIC_URL to have it filled in here).`;

export function tokenIssued(token: string, app: AppRecord, publicUrl: string | undefined, fresh: boolean): string {
  const base = snippetBase(publicUrl);
  // the script finds the service where it was loaded from; the package is told (see packageSnippet)
  const scriptInit = initArgument(token, app.appName);
  const packageInit = initArgument(token, app.appName, base);
  return [
    fresh
      ? `✅ <b>${escapeHtml(app.appName)}</b> is registered.`
      : `🔄 New token for <b>${escapeHtml(app.appName)}</b>. The old one stops working within seconds.`,
    '',
    'Your token (shown only once, keep it safe):',
    `<code>${token}</code>`,
    '',
    `App name (analytics identifier): <code>${escapeHtml(app.appName)}</code>`,
    '',
    'Add the script to your mini app page:',
    `<pre>${escapeHtml(scriptSnippet(base, scriptInit))}</pre>`,
    '',
    `Or install the package <code>${SDK_PACKAGE_NAME}</code> from this service and call init before your app renders:`,
    `<pre>${escapeHtml(packageInstallSnippet(base))}</pre>`,
    `<pre>${escapeHtml(packageSnippet(packageInit))}</pre>`,
    '',
    ...(publicUrl ? [] : [ADDRESS_HINT, '']),
    'Open “My tokens” to see when the first event arrives.',
  ].join('\n');
}

/** who made a key or link: "you" for the reader's own (yours: their reference), else by name when known */
export function madeByText(maker: Maker, yours: string): string {
  return maker.ref !== null && maker.ref === yours ? 'you' : makerText(maker);
}

/** an app's active read keys: prefix and creation time, never the key; yours: the reader's reference */
export function readKeysText(app: AppRecord, keys: ReadKeyInfo[], yours: string): string {
  const active = keys.filter((key) => key.revokedAt === null);
  return [
    `🔑 Read API keys of <b>${escapeHtml(app.appName)}</b>`,
    "A read key lets a script or a server read this app's analytics (<code>/api/v1/apps/…</code>); it cannot send events.",
    '',
    ...(active.length === 0
      ? ['No active read keys.']
      : active.map(
          (key) =>
            `<code>${escapeHtml(key.prefix)}…</code> created ${utcTime(key.createdAt)} by ${escapeHtml(madeByText(key.madeBy, yours))}`,
        )),
  ].join('\n');
}

/** a new read key, shown this once, with a request that tries it at PUBLIC_URL or the placeholder */
export function readKeyIssued(key: string, app: AppRecord, publicUrl: string | undefined): string {
  const curl = readKeySnippet(snippetBase(publicUrl), key, app.appName);
  return [
    `🔑 New read key for <b>${escapeHtml(app.appName)}</b>.`,
    '',
    'Your read key (shown only once, keep it safe):',
    `<code>${key}</code>`,
    '',
    'Try it:',
    `<pre>${escapeHtml(curl)}</pre>`,
    ...(publicUrl ? [] : ['', ADDRESS_HINT]),
  ].join('\n');
}

export function revokeReadKeyQuestion(app: AppRecord, prefix: string): string {
  return `Revoke the read key <code>${escapeHtml(prefix)}…</code> of <b>${escapeHtml(app.appName)}</b>? Requests with it are refused at once.`;
}

export const TEXT = {
  welcome:
    '👋 This bot issues access tokens for the analytics of your Telegram Mini Apps and shows whether their events arrive.\n\nOpen <b>Analytics</b> to start.',
  analytics: '📊 <b>Analytics</b>\nCreate a token for a mini app, or see your tokens and the time of their last event.',
  askBot:
    "Send the address of your mini app's bot, for example <code>@my_app_bot</code> or <code>https://t.me/my_app_bot</code>.\n/cancel to stop.",
  askBotId:
    "Send your bot's id: the number before <code>:</code> in the token @BotFather gave you, for example <code>7012345678</code>. Only that number, never the token. Telegram signs every launch of your mini app for this id, so your users count as verified (only verified users count in the catalog).\n/skip to add it later, /cancel to stop.",
  askDomain:
    'Send the domain your mini app is served from, for example <code>app.example.com</code> (a URL works too).\n/cancel to stop.',
  askAppName:
    'Send the app name: the analytics identifier your SDK sends as <code>appName</code>. 3–64 characters: lowercase letters, digits, <code>_</code> or <code>-</code>.\n/cancel to stop.',
  askNewDomain: 'Send the domain to add, for example <code>new.example.com</code>.\n/cancel to stop.',
  askErasedUser:
    'Send the Telegram user id of the person whose data to erase, for example <code>123456789</code>. Nothing is deleted before you confirm.\n/cancel to stop.',
  cancelled: 'Cancelled. Nothing was changed.',
  textPlease: 'Please answer with a text message, or /cancel.',
  busy: 'Finish the current step first, or send /cancel.',
  noApps: 'You have no apps yet. Tap “New token” to register one.',
  notYours: 'This app does not exist or is not yours.',
  adminOnly: 'This command is only for administrators.',
} as const;

/** what the retention purge removes, and what stays */
const PURGED_AND_KEPT = 'events, sessions and per-user rows';
const COUNTS_KEPT = 'Daily totals (events, users and sessions per day, launch dimensions, custom event counts) stay.';

/** an app's data controls: its retention period and what erasing a user does */
export function dataControlsText(app: AppRecord, days: RetentionDays, now: Date): string {
  const retention =
    days === null
      ? 'forever: events are kept until the app is deleted.'
      : `${retentionText(days)}: ${PURGED_AND_KEPT} from before ${firstKeptDay(days, now)} are deleted every hour. ${COUNTS_KEPT}`;
  return [
    `🛡 Data controls of <b>${escapeHtml(app.appName)}</b>`,
    '',
    `<b>Retention</b>: ${retention}`,
    '',
    "<b>Erase a user's data</b> (a data protection request): every event of one Telegram user in this app, their sessions and their per-user rows are deleted. Daily totals of events, users and sessions keep counting them, as anonymous numbers; what only they sent (a start_param, a custom event name or value) is deleted too.",
  ].join('\n');
}

export function retentionQuestion(app: AppRecord, days: number, now: Date): string {
  return `Keep the events of <b>${escapeHtml(app.appName)}</b> for ${retentionText(days)}? Their ${PURGED_AND_KEPT} from before ${firstKeptDay(days, now)} are deleted within the hour. This cannot be undone.`;
}

/** how the confirmation names the user: the same words are read back from it when its button is pressed */
const ERASED_USER_WORDS = 'Telegram user';
const ERASED_USER_IN_QUESTION = new RegExp(`^Erase ${ERASED_USER_WORDS} (\\d{1,20}) from `);

/**
 * telegramUserId: the id the owner just typed, shown back in their chat only (never stored or logged); stored: what
 * an erase would delete of the user now
 */
export function eraseQuestion(app: AppRecord, telegramUserId: string, stored: StoredOfUser): string {
  const found =
    stored.events === 0
      ? 'No event of theirs is stored; their per-user rows, if any, are deleted.'
      : `${counted(stored.events, 'event')} in ${counted(stored.sessions, 'session')} of theirs are deleted, with their per-user rows.`;
  return `Erase ${ERASED_USER_WORDS} <code>${escapeHtml(telegramUserId)}</code> from <b>${escapeHtml(app.appName)}</b>? ${found} Daily totals of events, users and sessions keep counting them, as anonymous numbers; what only they sent (a start_param, a custom event name or value) is deleted too. This cannot be undone.`;
}

/** the Telegram id a confirmation (as Telegram sends its text back with a press) names, or null */
export function erasedUserIdIn(question: string | undefined): string | null {
  return ERASED_USER_IN_QUESTION.exec(question ?? '')?.[1] ?? null;
}

/**
 * telegramUserId: the id the confirmation named, else null and the user goes unnamed; the erase's reference, which the
 * audit log keeps in place of the user, is shown for the owner to quote
 */
export function erasedText(
  { app, reference, deleted, complete }: ErasureResult,
  telegramUserId: string | null,
): string {
  const parts = [
    counted(deleted.events, 'event'),
    counted(deleted.daily_sessions, 'session'),
    counted(deleted.daily_users, 'active day'),
    counted(deleted.app_users + deleted.wallet_users, 'per-user record'),
  ];
  const who = telegramUserId === null ? 'a user' : `${ERASED_USER_WORDS} <code>${escapeHtml(telegramUserId)}</code>`;
  return [
    `🧹 Erased ${who} from <b>${escapeHtml(app.appName)}</b>: ${parts.join(', ')}.`,
    ...(complete
      ? []
      : ['⚠️ Their events kept arriving while erasing: some stored meanwhile may remain. Erase again to remove them.']),
    'Daily totals of events, users and sessions keep counting them, as anonymous numbers; what only they sent (a start_param, a custom event name or value) is deleted too.',
    `Reference in the audit log: <code>${escapeHtml(reference)}</code>`,
  ].join('\n');
}

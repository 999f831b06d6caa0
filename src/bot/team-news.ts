// Tells an app's owner in the bot when a member joins through an invite link or leaves: the registry keeps only the
// owner's keyed hash, so their chat is the app's alert chat that hashes to it (the chat that registered the app).
import { type Api, InlineKeyboard } from 'grammy';
import { madeText, type Made } from '../tokens/members.ts';
import type { MemberRole } from '../tokens/policy.ts';
import type { AppRecord } from '../tokens/registry.ts';
import type { BotDeps } from './context.ts';
import { appData } from './actions.ts';
import { HTML, escapeHtml } from './texts.ts';

/** a member as the owner is told of them: their name, or their reference in the team when no name is known */
export interface Newcomer {
  name: string | null;
  ref?: string;
  role: MemberRole;
}

const who = (member: Newcomer) => escapeHtml(member.name ?? member.ref ?? 'Someone');

export function joinedText(app: AppRecord, member: Newcomer): string {
  return `👥 ${who(member)} joined <b>${escapeHtml(app.appName)}</b> as ${member.role} through your invite link.`;
}

export function leftText(app: AppRecord, member: Newcomer, revoked: Made): string {
  const made = madeText(revoked);
  return (
    `🚪 ${who(member)} (${member.role}) left the team of <b>${escapeHtml(app.appName)}</b>` +
    (made ? `; ${made} they made ${revoked.keys + Number(revoked.shareLink) === 1 ? 'is' : 'are'} revoked.` : '.')
  );
}

/** sends `text` to the owner's private chat with a button to the team; a chat that cannot be reached is let go */
export async function tellOwner(deps: BotDeps, api: Api, app: AppRecord, text: string): Promise<void> {
  const { ownerKey } = app;
  if (ownerKey === null) return;
  const { registry, alertSubscriptions } = deps.services;
  const owner = await alertSubscriptions.chatWhere(app.appId, (chatId) => registry.ownerKey(chatId) === ownerKey);
  if (!owner) return;
  // the member's own step is done either way: an owner who blocked the bot does not undo it
  await api
    .sendMessage(owner.chatId, text, {
      ...HTML,
      reply_markup: new InlineKeyboard().text('👥 Team', appData('team', app.appId)),
    })
    .catch(() => undefined);
}

// What the buttons of an app's team do: the member list (owner and editors), invites as deep links, removing a member
// and handing the app over (owner, each asked first), a member leaving; and /start join_<code> accepting an invite.
// The owner is told in the bot when someone joins or leaves (team-news.ts).
import { InlineKeyboard } from 'grammy';
import { INVITE_PAYLOAD, isMemberRole, madeText, type Member } from '../tokens/members.ts';
import { RegistryError } from '../tokens/registry.ts';
import { utcTime } from '../platform/time-format.ts';
import { answered, type BotContext, type BotDeps } from './context.ts';
import { type AppContext, appData, mayPress, type OnAppAction } from './actions.ts';
import { analyticsKeyboard } from './keyboards.ts';
import type { Screens } from './screens.ts';
import { joinedText, leftText, tellOwner } from './team-news.ts';
import { HTML, escapeHtml } from './texts.ts';

const memberLabel = (member: Member) =>
  member.role === 'owner' ? `owner${member.you ? ' (you)' : ''}` : `${member.name ?? member.ref} (${member.role})`;

function teamText(appName: string, members: Member[]): string {
  return [
    `👥 Team of <b>${escapeHtml(appName)}</b>`,
    'Viewers see the dashboards and their alerts; editors also manage domains, the token, keys and the public link; ' +
      'only the owner changes data controls, the team, deletes or transfers the app.',
    '',
    ...members.map(
      (member) =>
        `• ${escapeHtml(memberLabel(member))}${member.you && member.role !== 'owner' ? ' — you' : ''}` +
        (member.addedAt ? `, joined ${utcTime(member.addedAt)}` : ''),
    ),
  ].join('\n');
}

function teamKeyboard(ctx: AppContext, members: Member[]): InlineKeyboard {
  const { app } = ctx;
  const keyboard = new InlineKeyboard();
  if (mayPress(app, 'inv'))
    keyboard
      .text('➕ Invite a viewer', appData('inv', app.appId, 'viewer'))
      .text('➕ Invite an editor', appData('inv', app.appId, 'editor'))
      .row();
  for (const member of members.filter((entry) => entry.role !== 'owner')) {
    if (mayPress(app, 'mdel')) keyboard.text(`➖ ${memberLabel(member)}`, appData('mdel', app.appId, member.ref));
    if (mayPress(app, 'xfer')) keyboard.text('👑 Make owner', appData('xfer', app.appId, member.ref));
    keyboard.row();
  }
  return keyboard.text('« Back', appData('app', app.appId));
}

export function teamActions(deps: BotDeps, screens: Screens, on: OnAppAction): void {
  const { members } = deps.services;

  const teamScreen = async (ctx: AppContext) => {
    const { members: listed } = await members.list(ctx.app.appName, deps.actorOf(ctx));
    return screens.show(ctx, teamText(ctx.app.appName, listed), teamKeyboard(ctx, listed));
  };
  /** the member the button names, or a told refusal (gone meanwhile) and null */
  const named = async (ctx: AppContext): Promise<Member | null> => {
    const { members: listed } = await members.list(ctx.app.appName, deps.actorOf(ctx));
    const member = listed.find((entry) => entry.ref === ctx.match[2] && entry.role !== 'owner');
    if (!member) await ctx.answerCallbackQuery({ text: 'This member is no longer in the team.', show_alert: true });
    return member ?? null;
  };

  on('team', answered(teamScreen));
  on('inv', async (ctx) => {
    const role = ctx.match[2];
    if (!isMemberRole(role)) return ctx.answerCallbackQuery();
    const invite = await members.createInvite(ctx.app.appName, role, deps.actorOf(ctx));
    await ctx.answerCallbackQuery({ text: 'Invite link made' });
    // in a message of its own, to forward; the code is not shown again
    return ctx.reply(
      `Send this link to the person you invite to <b>${escapeHtml(ctx.app.appName)}</b> as ${role}. It works once, ` +
        `until ${utcTime(invite.expiresAt)}:\nhttps://t.me/${ctx.me.username}?start=join_${invite.code}`,
      { ...HTML, link_preview_options: { is_disabled: true } },
    );
  });
  on('mdel', async (ctx) => {
    const member = await named(ctx);
    if (!member) return;
    await ctx.answerCallbackQuery();
    const made = madeText(member.made);
    return screens.show(
      ctx,
      `Remove ${escapeHtml(memberLabel(member))} from <b>${escapeHtml(ctx.app.appName)}</b>? Their alerts of it stop` +
        (made ? `, and it revokes ${made} they made.` : '.'),
      new InlineKeyboard()
        .text('➖ Yes, remove', appData('mdel!', ctx.app.appId, member.ref))
        .text('Cancel', appData('team', ctx.app.appId)),
    );
  });
  on('mdel!', async (ctx) => {
    const { revoked } = await members.remove(ctx.app.appName, ctx.match[2] ?? '', deps.actorOf(ctx));
    const made = madeText(revoked);
    await ctx.answerCallbackQuery({ text: made ? `Removed; ${made} they made revoked` : 'Removed' });
    return teamScreen(ctx);
  });
  on('xfer', async (ctx) => {
    const member = await named(ctx);
    if (!member) return;
    await ctx.answerCallbackQuery();
    return screens.show(
      ctx,
      `Hand <b>${escapeHtml(ctx.app.appName)}</b> over to ${escapeHtml(memberLabel(member))}? They become its owner ` +
        'and you an editor: only they can give it back.',
      new InlineKeyboard()
        .text('👑 Yes, hand it over', appData('xfer!', ctx.app.appId, member.ref))
        .text('Cancel', appData('team', ctx.app.appId)),
    );
  });
  on('xfer!', async (ctx) => {
    const { app } = await members.transfer(ctx.app.appName, ctx.match[2] ?? '', deps.actorOf(ctx));
    await ctx.answerCallbackQuery({ text: 'Handed over' });
    return screens.app(ctx, app);
  });
  on(
    'leave',
    answered((ctx) =>
      screens.show(
        ctx,
        `Leave the team of <b>${escapeHtml(ctx.app.appName)}</b>? Only a new invite brings you back, and the read ` +
          'keys, server keys and public link you made are revoked.',
        new InlineKeyboard()
          .text('🚪 Yes, leave', appData('leave!', ctx.app.appId))
          .text('Cancel', appData('app', ctx.app.appId)),
      ),
    ),
  );
  on('leave!', async (ctx) => {
    const { app, member, revoked } = await members.leave(ctx.app.appName, deps.actorOf(ctx));
    await ctx.answerCallbackQuery({ text: 'You left' });
    if (member.role !== 'owner')
      await tellOwner(deps, ctx.api, app, leftText(app, { ...member, role: member.role }, revoked));
    return screens.show(
      ctx,
      `🚪 You left <b>${escapeHtml(ctx.app.appName)}</b>.`,
      analyticsKeyboard(deps.isAdmin(ctx)),
    );
  });
}

/** /start join_<code>: accepts the invite and says which app and role; false when the payload is not an invite */
export async function acceptInvite(deps: BotDeps, ctx: BotContext, payload: string): Promise<boolean> {
  const code = INVITE_PAYLOAD.exec(payload)?.[1];
  if (code === undefined || !ctx.from) return false;
  try {
    const { app, role } = await deps.services.members.acceptInvite(code, String(ctx.from.id), ctx.from.first_name);
    await ctx.reply(`✅ You joined <b>${escapeHtml(app.appName)}</b> as ${role}. It is in “My tokens”.`, {
      ...HTML,
      reply_markup: new InlineKeyboard().text(`⚙️ ${app.appName}`, appData('app', app.appId)),
    });
    await tellOwner(deps, ctx.api, app, joinedText(app, { name: ctx.from.first_name, role }));
  } catch (error) {
    if (!(error instanceof RegistryError)) throw error;
    await ctx.reply(error.message, { reply_markup: analyticsKeyboard(deps.isAdmin(ctx)) });
  }
  return true;
}

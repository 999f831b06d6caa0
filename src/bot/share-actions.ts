// What the buttons of an app's public link do: the screen (whether a link is active), a new link (shown once; the
// one before stops working) and revoking it.
import { InlineKeyboard } from 'grammy';
import type { AppRecord } from '../tokens/registry.ts';
import { type ShareLinkInfo, sharePath } from '../tokens/share-links.ts';
import { utcTime } from '../platform/time-format.ts';
import { answered, type BotDeps, yourReference } from './context.ts';
import { type AppContext, appData, type OnAppAction } from './actions.ts';
import type { Screens } from './screens.ts';
import { escapeHtml, HTML, madeByText, snippetBase } from './texts.ts';

/** yours: the reader's reference, so a link they made reads as theirs */
function shareText(app: AppRecord, link: ShareLinkInfo | null, yours: string): string {
  return [
    `🔗 Public link of <b>${escapeHtml(app.appName)}</b>`,
    "Anyone with the link sees this app's dashboard numbers without signing in; not the token, domains, refusals " +
      'or events.',
    '',
    link
      ? `A link is active: <code>${escapeHtml(link.prefix)}…</code> made ${utcTime(link.createdAt)} by ${escapeHtml(madeByText(link.madeBy, yours))}`
      : 'No link yet.',
  ].join('\n');
}

function shareKeyboard(app: AppRecord, link: ShareLinkInfo | null): InlineKeyboard {
  const keyboard = new InlineKeyboard().text(link ? '🔄 New link' : '➕ Make a link', appData('share!', app.appId));
  if (link) keyboard.text('🚫 Revoke', appData('unshare!', app.appId));
  return keyboard.row().text('« Back', appData('app', app.appId));
}

export function shareActions(deps: BotDeps, screens: Screens, on: OnAppAction): void {
  const { shareLinks, config } = deps.services;
  const screen = async (ctx: AppContext) => {
    const link = await shareLinks.current(ctx.app.appName, deps.actorOf(ctx));
    return screens.show(
      ctx,
      shareText(ctx.app, link, yourReference(deps, ctx, ctx.app.appId)),
      shareKeyboard(ctx.app, link),
    );
  };
  on('share', answered(screen));
  on(
    'share!',
    answered(async (ctx) => {
      const { secret } = await shareLinks.create(ctx.app.appName, deps.actorOf(ctx));
      const base = snippetBase(config.publicUrl);
      // in a message of its own, so the screen that follows does not overwrite it
      await ctx.reply(
        `🔗 The public link of <b>${escapeHtml(ctx.app.appName)}</b> (shown only once; a new one replaces it):\n` +
          `${escapeHtml(base + sharePath(secret))}`,
        HTML,
      );
      return screen(ctx);
    }),
  );
  on('unshare!', async (ctx) => {
    const revoked = await shareLinks.revoke(ctx.app.appName, deps.actorOf(ctx));
    await ctx.answerCallbackQuery({ text: revoked ? 'Link revoked' : 'There was no link' });
    return screen(ctx);
  });
}

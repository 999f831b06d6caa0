// The menus: /start (with a join_<code> payload: an invite accepted), Analytics, "My tokens", the way into the new-token dialog, /help, and /cancel outside a dialog.
import { Composer } from 'grammy';
import { helpText } from './commands.ts';
import { answered, type BotContext, type BotDeps } from './context.ts';
import { DIALOG } from './conversations.ts';
import { analyticsKeyboard, mainKeyboard } from './keyboards.ts';
import type { Screens } from './screens.ts';
import { acceptInvite } from './team-actions.ts';
import { HTML, TEXT } from './texts.ts';

export function menus(deps: BotDeps, screens: Screens): Composer<BotContext> {
  const composer = new Composer<BotContext>();
  const newToken = (ctx: BotContext) => ctx.conversation.enter(DIALOG.newToken);

  composer.command('start', async (ctx) => {
    if (await acceptInvite(deps, ctx, ctx.match.trim())) return;
    return ctx.reply(TEXT.welcome, { ...HTML, reply_markup: mainKeyboard() });
  });
  composer.command('analytics', screens.analytics);
  composer.command('newtoken', newToken);
  composer.command('mytokens', screens.myApps);
  composer.command('help', (ctx) =>
    ctx.reply(helpText(deps.isAdmin(ctx)), { ...HTML, reply_markup: analyticsKeyboard(deps.isAdmin(ctx)) }),
  );
  // inside a dialog /cancel is its answer; here there is nothing to leave
  composer.command('cancel', (ctx) =>
    ctx.reply('Nothing to cancel.', { reply_markup: analyticsKeyboard(deps.isAdmin(ctx)) }),
  );

  composer.callbackQuery('menu:analytics', answered(screens.analytics));
  composer.callbackQuery('menu:new', answered(newToken));
  composer.callbackQuery('menu:apps', answered(screens.myApps));
  return composer;
}

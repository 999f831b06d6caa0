// Administrator commands: all apps, finding apps by name or owner, revoking any app's token. Everyone
// else who tries them is told they are for administrators.
import { Composer } from 'grammy';
import { ADMIN_COMMANDS } from './commands.ts';
import { answered, type BotContext, type BotDeps } from './context.ts';
import type { Screens } from './screens.ts';
import { TEXT, escapeHtml } from './texts.ts';

export function adminCommands(deps: BotDeps, screens: Screens): Composer<BotContext> {
  const { registry } = deps.services;
  const composer = new Composer<BotContext>();
  const admins = composer.filter(deps.isAdmin);

  const allApps = async (ctx: BotContext) =>
    screens.apps(ctx, await registry.listApps(deps.actorOf(ctx)), '🛠 <b>All apps</b>', 'No apps are registered.');
  admins.command('admin', allApps);
  admins.callbackQuery('admin:apps', answered(allApps));
  admins.command('find', async (ctx) => {
    const query = ctx.match.trim();
    if (!query) return ctx.reply('Usage: /find <app name or owner Telegram id>');
    const filter = /^\d{1,20}$/.test(query) ? { ownerTelegramId: query } : { appName: query };
    return screens.apps(
      ctx,
      await registry.listApps(deps.actorOf(ctx), filter),
      `🔎 <b>${escapeHtml(query)}</b>`,
      'Nothing found.',
    );
  });
  admins.command('revoke', async (ctx) => {
    const appName = ctx.match.trim();
    if (!appName) return ctx.reply('Usage: /revoke <app name>');
    await registry.revoke(appName, deps.actorOf(ctx));
    return ctx.reply(`🚫 The token of ${appName} is revoked.`);
  });

  composer.command(
    ADMIN_COMMANDS.map(({ command }) => command),
    (ctx) => ctx.reply(TEXT.adminOnly),
  );
  composer.callbackQuery(
    'admin:apps',
    answered((ctx) => ctx.reply(TEXT.adminOnly)),
  );
  return composer;
}

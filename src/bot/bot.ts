// The management bot (grammY): Analytics menu, new-token dialog, "My tokens" with last event times,
// per-app revoke / regenerate / domains / delete, administrator commands. UI only: every decision and
// every write goes through the token registry and the event store.
import { autoRetry } from '@grammyjs/auto-retry';
import { conversations, createConversation } from '@grammyjs/conversations';
import { Bot, GrammyError, HttpError, type Context, type Transformer } from 'grammy';
import type { UserFromGetMe } from 'grammy/types';
import type { Services } from '../services.ts';
import { RegistryError, type Actor, type AppRecord } from '../tokens/registry.ts';
import { addDomainDialog, newTokenDialog, type BotContext } from './conversations.ts';
import {
  APP_DATA,
  analyticsKeyboard,
  appKeyboard,
  appsKeyboard,
  confirmKeyboard,
  domainsKeyboard,
  mainKeyboard,
} from './keyboards.ts';
import { databaseStateStorage } from './state-storage.ts';
import { TEXT, appCard, escapeHtml, tokenIssued, type AppView } from './texts.ts';

export interface BotOptions {
  token: string;
  /** a local Bot API server or emulator instead of api.telegram.org */
  apiRoot?: string;
  /** skip getMe (tests) */
  botInfo?: UserFromGetMe;
  /** extra Bot API transformers, applied to every call (inside dialogs too) after auto-retry */
  transformers?: Transformer[];
  log: { warn(object: object, message: string): void; error(object: object, message: string): void };
  now?: () => Date;
}

const HTML = { parse_mode: 'HTML' } as const;
const MAX_LISTED = 20;

export const COMMANDS = [
  { command: 'start', description: 'Main menu' },
  { command: 'analytics', description: 'Tokens of your mini apps and their last events' },
  { command: 'newtoken', description: 'Register a mini app and get its token' },
  { command: 'mytokens', description: 'Your apps, tokens and last event times' },
  { command: 'cancel', description: 'Stop the current step' },
];

export const ADMIN_COMMANDS = [
  { command: 'admin', description: 'All apps (administrators)' },
  { command: 'find', description: 'Find apps by app name or owner id (administrators)' },
  { command: 'revoke', description: 'Revoke the token of any app (administrators)' },
];

export function createBot(services: Services, options: BotOptions): Bot<BotContext> {
  const { registry } = services;
  const admins = new Set(services.config.adminTelegramIds);
  const now = options.now ?? (() => new Date());
  const bot = new Bot<BotContext>(options.token, {
    botInfo: options.botInfo,
    client: options.apiRoot ? { apiRoot: options.apiRoot } : undefined,
  });
  // Telegram's 429 "retry after" and network hiccups are retried; dialogs get their own Api instance,
  // so the same transformers are installed there as a conversation plugin
  const transformers: Transformer[] = [autoRetry({ maxRetryAttempts: 3, maxDelaySeconds: 60 }), ...(options.transformers ?? [])];
  bot.api.config.use(...transformers);

  const actorOf = (ctx: Context): Actor => {
    const telegramId = String(ctx.from!.id);
    return { surface: 'bot', telegramId, isAdmin: admins.has(telegramId) };
  };
  const isAdmin = (ctx: Context) => ctx.from !== undefined && admins.has(String(ctx.from.id));

  // only private chats with a real user are served: groups could leak a user's tokens to others
  bot.use((ctx, next) => (ctx.chat?.type === 'private' && ctx.from !== undefined && !ctx.from.is_bot ? next() : undefined));

  const stateKey = (ctx: Context) => services.secrets.hmac('bot-chat', String(ctx.chatId)).toString('base64url').slice(0, 22);
  bot.use(
    conversations({
      storage: { type: 'key', getStorageKey: stateKey, adapter: databaseStateStorage(services.store.prisma) },
      plugins: [
        (ctx, next) => {
          ctx.api.config.use(...transformers);
          return next();
        },
      ],
    }),
  );
  const dialogDeps = { registry, allowLocalhost: services.config.allowLocalhostDomains, publicUrl: services.config.publicUrl, actorOf };
  bot.use(createConversation(newTokenDialog(dialogDeps), 'new-token'));
  bot.use(createConversation(addDomainDialog(dialogDeps), 'add-domain'));

  const view = async (app: AppRecord): Promise<AppView> => ({
    app,
    activity: await services.caughtUp().then(() => services.events.activity(app.appId)),
    lastRejection: (await services.rejections.recent(app.appId, 1))[0] ?? null,
  });

  /** shows a screen: edits the message behind a button, or sends a new one for commands */
  const show = async (ctx: BotContext, text: string, keyboard: ReturnType<typeof mainKeyboard>) => {
    if (ctx.callbackQuery?.message) {
      await ctx.editMessageText(text, { ...HTML, reply_markup: keyboard }).catch((error: unknown) => {
        if (!(error instanceof GrammyError && error.description.includes('message is not modified'))) throw error;
      });
    } else {
      await ctx.reply(text, { ...HTML, reply_markup: keyboard });
    }
  };

  const showAnalytics = (ctx: BotContext) => show(ctx, TEXT.analytics, analyticsKeyboard(isAdmin(ctx), dashboardUrl(services.config.publicUrl)));

  const showApps = async (ctx: BotContext, apps: AppRecord[], heading: string, empty: string) => {
    if (apps.length === 0) return show(ctx, empty, analyticsKeyboard(isAdmin(ctx)));
    const listed = apps.slice(0, MAX_LISTED);
    const cards = await Promise.all(listed.map(async (app) => appCard(await view(app), now())));
    const more = apps.length > MAX_LISTED ? `\n\n…and ${apps.length - MAX_LISTED} more` : '';
    return show(ctx, `${heading}\n\n${cards.join('\n\n')}${more}`, appsKeyboard(listed));
  };

  const showMyApps = async (ctx: BotContext) => showApps(ctx, await registry.listApps({ ...actorOf(ctx), isAdmin: false }), '📋 <b>Your apps</b>', TEXT.noApps);

  bot.command('start', (ctx) => ctx.reply(TEXT.welcome, { ...HTML, reply_markup: mainKeyboard() }));
  bot.command('analytics', showAnalytics);
  bot.command('newtoken', (ctx) => ctx.conversation.enter('new-token'));
  bot.command('mytokens', showMyApps);
  bot.command('cancel', (ctx) => ctx.reply('Nothing to cancel.', { reply_markup: analyticsKeyboard(isAdmin(ctx)) }));

  bot.callbackQuery('menu:analytics', async (ctx) => {
    await ctx.answerCallbackQuery();
    await showAnalytics(ctx);
  });
  bot.callbackQuery('menu:new', async (ctx) => {
    await ctx.answerCallbackQuery();
    await ctx.conversation.enter('new-token');
  });
  bot.callbackQuery('menu:apps', async (ctx) => {
    await ctx.answerCallbackQuery();
    await showMyApps(ctx);
  });

  bot.callbackQuery(APP_DATA, async (ctx) => {
    const [, action, id, extra] = ctx.match;
    const actor = actorOf(ctx);
    let app: AppRecord;
    try {
      app = await registry.getAppById(Number(id), actor);
    } catch (error) {
      if (error instanceof RegistryError) return ctx.answerCallbackQuery({ text: TEXT.notYours, show_alert: true });
      throw error;
    }
    const name = escapeHtml(app.appName);
    switch (action) {
      case 'app':
        await ctx.answerCallbackQuery();
        return show(ctx, appCard(await view(app), now()), appKeyboard(app));
      case 'rev':
        await ctx.answerCallbackQuery();
        return show(ctx, `Revoke the token of <b>${name}</b>? Events sent with it will be refused with “Token is invalid.”`, confirmKeyboard('rev!', app.appId, '🚫 Yes, revoke'));
      case 'rev!': {
        const revoked = await registry.revoke(app.appName, actor);
        await ctx.answerCallbackQuery({ text: 'Token revoked' });
        return show(ctx, appCard(await view(revoked), now()), appKeyboard(revoked));
      }
      case 'regen':
        await ctx.answerCallbackQuery();
        return show(ctx, `Issue a new token for <b>${name}</b>? The current one stops working within seconds.`, confirmKeyboard('regen!', app.appId, '🔄 Yes, new token'));
      case 'regen!': {
        const { token, app: renewed } = await registry.regenerate(app.appName, actor);
        await ctx.answerCallbackQuery({ text: 'New token issued' });
        await ctx.editMessageReplyMarkup().catch(() => undefined);
        return ctx.reply(tokenIssued(token, renewed, services.config.publicUrl, false), { ...HTML, reply_markup: analyticsKeyboard(isAdmin(ctx)) });
      }
      case 'dom':
        await ctx.answerCallbackQuery();
        return show(ctx, `🌐 Domains of <b>${name}</b>:\n${app.domains.map(escapeHtml).join('\n')}\n\nEvents are accepted from these domains only.`, domainsKeyboard(app));
      case 'domadd':
        await ctx.answerCallbackQuery();
        return ctx.conversation.enter('add-domain', app.appName);
      case 'domdel': {
        const domain = app.domains[Number(extra)];
        if (domain === undefined) return ctx.answerCallbackQuery();
        try {
          const changed = await registry.removeDomain(app.appName, domain, actor);
          await ctx.answerCallbackQuery({ text: `${domain} removed` });
          return show(ctx, `🌐 Domains of <b>${name}</b>:\n${changed.domains.map(escapeHtml).join('\n')}`, domainsKeyboard(changed));
        } catch (error) {
          if (error instanceof RegistryError) return ctx.answerCallbackQuery({ text: error.message, show_alert: true });
          throw error;
        }
      }
      case 'del':
        await ctx.answerCallbackQuery();
        return show(ctx, `Delete <b>${name}</b> with its token and all its recorded events? This cannot be undone.`, confirmKeyboard('del!', app.appId, '🗑 Yes, delete'));
      case 'del!':
        await registry.deleteApp(app.appName, actor);
        await ctx.answerCallbackQuery({ text: 'App deleted' });
        return show(ctx, `🗑 <b>${name}</b> was deleted.`, analyticsKeyboard(isAdmin(ctx)));
    }
  });

  // administrators
  const adminOnly = (handler: (ctx: BotContext) => Promise<unknown>) => async (ctx: BotContext) =>
    isAdmin(ctx) ? handler(ctx) : ctx.reply(TEXT.adminOnly);
  const allApps = adminOnly(async (ctx) => showApps(ctx, await registry.listApps(actorOf(ctx)), '🛠 <b>All apps</b>', 'No apps are registered.'));
  bot.command('admin', allApps);
  bot.callbackQuery('admin:apps', async (ctx) => {
    await ctx.answerCallbackQuery();
    await allApps(ctx);
  });
  bot.command(
    'find',
    adminOnly(async (ctx) => {
      const query = String(ctx.match ?? '').trim();
      if (!query) return ctx.reply('Usage: /find <app name or owner Telegram id>');
      const filter = /^\d{1,20}$/.test(query) ? { ownerTelegramId: query } : { appName: query };
      return showApps(ctx, await registry.listApps(actorOf(ctx), filter), `🔎 <b>${escapeHtml(query)}</b>`, 'Nothing found.');
    }),
  );
  bot.command(
    'revoke',
    adminOnly(async (ctx) => {
      const appName = String(ctx.match ?? '').trim();
      if (!appName) return ctx.reply('Usage: /revoke <app name>');
      try {
        await registry.revoke(appName, actorOf(ctx));
        return ctx.reply(`🚫 The token of ${appName} is revoked.`);
      } catch (error) {
        if (error instanceof RegistryError) return ctx.reply(error.message);
        throw error;
      }
    }),
  );

  // anything else: point the way instead of staying silent
  bot.on('callback_query', (ctx) => ctx.answerCallbackQuery());
  bot.on('message', (ctx) => ctx.reply('Use /analytics to manage your tokens.', { reply_markup: analyticsKeyboard(isAdmin(ctx)) }));

  bot.catch(async ({ error, ctx }) => {
    options.log.error({ err: error, update: ctx.update.update_id }, 'bot update failed');
    if (ctx.callbackQuery) await ctx.answerCallbackQuery({ text: 'Something went wrong. Please try again.' }).catch(() => undefined);
    else if (!(error instanceof HttpError)) await ctx.reply('Something went wrong. Please try again.').catch(() => undefined);
  });
  return bot;
}

/** the site's Mini App entry, when the service has a public https address (Telegram requires https) */
export function dashboardUrl(publicUrl: string | undefined): string | undefined {
  return publicUrl?.startsWith('https://') ? `${publicUrl}/webapp` : undefined;
}

/** Registers the command lists (and the dashboard as the chat's menu button) where the Bot API allows it. */
export async function registerCommands(bot: Bot<BotContext>, adminIds: string[], publicUrl: string | undefined, log: BotOptions['log']): Promise<void> {
  try {
    const webApp = dashboardUrl(publicUrl);
    if (webApp) await bot.api.setChatMenuButton({ menu_button: { type: 'web_app', text: 'Dashboards', web_app: { url: webApp } } });
    await bot.api.setMyCommands(COMMANDS);
    for (const id of adminIds) {
      await bot.api.setMyCommands([...COMMANDS, ...ADMIN_COMMANDS], { scope: { type: 'chat', chat_id: Number(id) } });
    }
  } catch (error) {
    log.warn({ err: (error as Error).message }, 'could not register the bot commands');
  }
}

/**
 * Runs long polling until `signal` aborts. Telegram being unreachable never stops the service: the bot
 * retries every 15 s and logs why.
 */
export async function runBot(bot: Bot<BotContext>, config: { adminTelegramIds: string[]; publicUrl?: string }, log: BotOptions['log'], signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      if (!bot.isInited()) await bot.init();
      await registerCommands(bot, config.adminTelegramIds, config.publicUrl, log);
      await bot.start({ drop_pending_updates: false });
    } catch (error) {
      log.error({ err: (error as Error).message }, 'bot cannot reach Telegram; retrying in 15 s');
      await new Promise((resolve) => setTimeout(resolve, 15_000).unref());
    }
  }
}

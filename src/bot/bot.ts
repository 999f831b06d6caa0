// The management bot (grammY): Analytics menu, new-token dialog, "My tokens" with last event times,
// per-app revoke / regenerate / domains / delete, administrator commands. UI only: every decision and
// every write goes through the token registry and the event plane.
import { autoRetry } from '@grammyjs/auto-retry';
import { conversations, createConversation } from '@grammyjs/conversations';
import { Bot, HttpError, type Context, type Transformer } from 'grammy';
import type { UserFromGetMe } from 'grammy/types';
import type { Services } from '../services.ts';
import { adminCommands } from './admin.ts';
import { alerts } from './alerts.ts';
import { appActions } from './app-actions.ts';
import { commandsOf } from './commands.ts';
import { botDeps, type BotContext } from './context.ts';
import { DIALOG, addDomainDialog, eraseUserDialog, newTokenDialog, setBotIdDialog } from './conversations.ts';
import { withoutEmptyRows } from './keyboard-rows.ts';
import { analyticsKeyboard } from './keyboards.ts';
import { menus } from './menus.ts';
import { tellRefusal } from './refusals.ts';
import { dashboardUrl, screens } from './screens.ts';
import { databaseStateStorage } from './state-storage.ts';

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

/**
 * The shape of a stored dialog in progress (its steps); a dialog stored in another shape is dropped
 * instead of being replayed against steps it was not recorded with.
 */
const DIALOG_STATE_VERSION = 1;

/**
 * The calls by which the bot starts and receives its updates: a network error fails them at once, so the update
 * loop says why and tries again every 15 s (the retry plugin would retry without a word, waiting up to an hour)
 */
const RECEIVING_METHODS = new Set(['getMe', 'getUpdates', 'deleteWebhook', 'setWebhook']);

/** `retrying` for every call but those of receiving updates */
function retriedUnlessReceiving(retrying: Transformer): Transformer {
  return (prev, method, payload, signal) =>
    RECEIVING_METHODS.has(method) ? prev(method, payload, signal) : retrying(prev, method, payload, signal);
}

export function createBot(services: Services, options: BotOptions): Bot<BotContext> {
  const deps = botDeps(services, options.now ?? (() => new Date()));
  const bot = new Bot<BotContext>(options.token, {
    botInfo: options.botInfo,
    client: options.apiRoot ? { apiRoot: options.apiRoot } : undefined,
  });
  // Telegram's 429 "retry after", its 5xx answers and network errors are retried (messages, alerts, replies).
  // Dialogs get their own Api instance, so the same transformers are installed there as a conversation plugin
  const transformers: Transformer[] = [
    retriedUnlessReceiving(autoRetry({ maxRetryAttempts: 3, maxDelaySeconds: 60 })),
    ...(options.transformers ?? []),
    // installed last, so it runs first: every other transformer, and Telegram, sees the keyboard without empty rows
    withoutEmptyRows,
  ];
  bot.api.config.use(...transformers);

  // refusals and reads past their budget are told in words, in polling and webhook mode alike, and are no failure
  const told = bot.errorBoundary(tellRefusal);

  // only private chats with a real user are served: groups could leak a user's tokens to others
  const people = told.chatType('private').filter((ctx) => ctx.from?.is_bot === false);

  const stateKey = (ctx: Context) => services.secrets.shortHash('bot-chat', String(ctx.chatId));
  people.use(
    conversations<BotContext, Context>({
      storage: {
        type: 'key',
        version: DIALOG_STATE_VERSION,
        getStorageKey: stateKey,
        adapter: databaseStateStorage(services.store.prisma),
      },
      plugins: [
        (ctx, next) => {
          ctx.api.config.use(...transformers);
          return next();
        },
      ],
    }),
  );
  people.use(createConversation(newTokenDialog(deps), DIALOG.newToken));
  people.use(createConversation(addDomainDialog(deps), DIALOG.addDomain));
  people.use(createConversation(setBotIdDialog(deps), DIALOG.setBotId));
  people.use(createConversation(eraseUserDialog(deps), DIALOG.eraseUser));

  const screensOf = screens(deps);
  people.use(menus(deps, screensOf));
  people.use(appActions(deps, screensOf));
  people.use(adminCommands(deps, screensOf));
  people.use(alerts(deps, screensOf));

  // anything else: point the way instead of staying silent
  people.on('callback_query', (ctx) => ctx.answerCallbackQuery());
  people.on('message', (ctx) =>
    ctx.reply('Use /analytics to manage your tokens.', { reply_markup: analyticsKeyboard(deps.isAdmin(ctx)) }),
  );

  bot.catch(async ({ error, ctx }) => {
    options.log.error({ err: error, update: ctx.update.update_id }, 'bot update failed');
    if (ctx.callbackQuery)
      await ctx.answerCallbackQuery({ text: 'Something went wrong. Please try again.' }).catch(() => undefined);
    else if (!(error instanceof HttpError))
      await ctx.reply('Something went wrong. Please try again.').catch(() => undefined);
  });
  return bot;
}

/** Registers the command lists (and the dashboard as the chat's menu button) where the Bot API allows it. */
export async function registerCommands(
  bot: Bot<BotContext>,
  adminIds: string[],
  publicUrl: string | undefined,
  log: BotOptions['log'],
): Promise<void> {
  try {
    const webApp = dashboardUrl(publicUrl);
    if (webApp)
      await bot.api.setChatMenuButton({
        menu_button: { type: 'web_app', text: 'Dashboards', web_app: { url: webApp } },
      });
    await bot.api.setMyCommands(commandsOf(false));
    for (const id of adminIds) {
      await bot.api.setMyCommands(commandsOf(true), { scope: { type: 'chat', chat_id: Number(id) } });
    }
  } catch (error) {
    log.warn({ err: (error as Error).message }, 'could not register the bot commands');
  }
}

// The bot's multi-step dialogs: registering a new app (bot address → bot id → domain → app name → token), adding a
// domain, setting the bot's id, and naming the user whose data to erase. The questions themselves are in questions.ts.
import type { Context } from 'grammy';
import { userKeyText } from '../events/lifecycle/data-controls.ts';
import { parseAppName, parseBotAddress, parseBotId, parseDomain, parseTelegramUserId } from '../tokens/inputs.ts';
import type { Parsed } from '../platform/parsed.ts';
import { RegistryError } from '../tokens/registry.ts';
import type { BotDeps } from './context.ts';
import { analyticsKeyboard, eraseConfirmKeyboard } from './keyboards.ts';
import { ask, type Dialog } from './questions.ts';
import { screens } from './screens.ts';
import { HTML, TEXT, eraseQuestion, escapeHtml, tokenIssued } from './texts.ts';

// the bot's context type, also where the test harness takes it from
export type { BotContext } from './context.ts';

/** the dialogs' conversation ids, as stored with a dialog in progress */
export const DIALOG = {
  newToken: 'new-token',
  addDomain: 'add-domain',
  setBotId: 'set-bot-id',
  eraseUser: 'erase-user',
} as const;

/** a bot id, or /skip for none yet */
const botIdOrSkip = (text: string): Parsed<string | null> =>
  /^\/skip(@\w+)?$/i.test(text) ? { ok: true, value: null } : parseBotId(text);

export function newTokenDialog(deps: BotDeps) {
  const { registry, config } = deps.services;
  const domainRule = (text: string) => parseDomain(text, { allowLocalhost: config.allowLocalhostDomains });
  return async function newToken(conversation: Dialog, ctx: Context): Promise<void> {
    const bot = await ask(conversation, ctx, TEXT.askBot, parseBotAddress);
    const botId = await ask(conversation, ctx, TEXT.askBotId, botIdOrSkip);
    const domain = await ask(conversation, ctx, TEXT.askDomain, domainRule);
    // a name taken by another app is told with the question asking for another, in one message
    let taken: string | undefined;
    for (;;) {
      const appName = await ask(conversation, ctx, TEXT.askAppName, parseAppName, taken);
      // the token is created and sent inside one external step, so the secret never enters the stored dialog state
      const refusal = await conversation.external(async (outside) => {
        const actor = deps.actorOf(outside);
        try {
          const { token, app } = await registry.createApp(
            {
              appName,
              bot,
              botId,
              domains: [domain],
              ownerTelegramId: actor.telegramId,
              ownerName: outside.from?.first_name,
            },
            actor,
          );
          // the chat that registers an app hears about its first event, silence and refusals without asking
          if (outside.chat) await deps.services.alertSubscriptions.subscribe(app.appId, String(outside.chat.id));
          await outside.reply(tokenIssued(token, app, config.publicUrl, true), {
            ...HTML,
            reply_markup: analyticsKeyboard(false),
          });
          return null;
        } catch (failure) {
          if (failure instanceof RegistryError && failure.code === 'app_exists') return failure.message;
          if (failure instanceof RegistryError && failure.code === 'app_limit') {
            await outside.reply(failure.message, { reply_markup: analyticsKeyboard(false) });
            return null;
          }
          throw failure;
        }
      });
      if (refusal === null) return;
      taken = `${escapeHtml(refusal)} Choose another name.`;
    }
  };
}

export function addDomainDialog(deps: BotDeps) {
  const { registry, config } = deps.services;
  return async function addDomain(conversation: Dialog, ctx: Context, appName: string): Promise<void> {
    for (;;) {
      const domain = await ask(conversation, ctx, TEXT.askNewDomain, (text) =>
        parseDomain(text, { allowLocalhost: config.allowLocalhostDomains }),
      );
      const refusal = await conversation.external(async (outside) => {
        try {
          const app = await registry.addDomain(appName, domain, deps.actorOf(outside));
          // back to the card of the app the domain was added to, where the next step on it starts
          await screens(deps).app(outside, app, `✅ ${escapeHtml(domain)} added.`);
          return null;
        } catch (failure) {
          if (failure instanceof RegistryError) return { code: failure.code, message: failure.message };
          throw failure;
        }
      });
      if (refusal === null) return;
      await ctx.reply(refusal.message);
      // the app is gone, not the user's, or no longer theirs to change: another domain would not help
      if (refusal.code === 'app_not_found' || refusal.code === 'forbidden') return;
    }
  };
}

export function setBotIdDialog(deps: BotDeps) {
  const { registry } = deps.services;
  return async function setBotId(conversation: Dialog, ctx: Context, appName: string): Promise<void> {
    const botId = await ask(conversation, ctx, TEXT.askBotId, botIdOrSkip);
    if (botId === null) {
      await ctx.reply(TEXT.cancelled, { reply_markup: analyticsKeyboard(false) });
      return;
    }
    await conversation.external(async (outside) => {
      try {
        const app = await registry.setBotId(appName, botId, deps.actorOf(outside));
        await outside.reply(
          `✅ The bot id of <b>${escapeHtml(app.appName)}</b> is <code>${app.botId}</code>: launches Telegram signs for it count as verified from now on.`,
          { ...HTML, reply_markup: analyticsKeyboard(false) },
        );
      } catch (failure) {
        if (!(failure instanceof RegistryError)) throw failure;
        await outside.reply(failure.message);
      }
    });
  };
}

/**
 * Asks for the Telegram user id whose data to erase, and answers with a confirmation that names the id back to the
 * owner who typed it, with what of the user is stored, and whose button carries the user's key. The dialog ends in
 * the update that brings the id, so its stored state never holds it (answers refused by the question are skipped,
 * never stored); nothing is deleted before the button is pressed.
 */
export function eraseUserDialog(deps: BotDeps) {
  const { dataControls } = deps.services;
  return async function eraseUser(conversation: Dialog, ctx: Context, appName: string): Promise<void> {
    const telegramUserId = await ask(conversation, ctx, TEXT.askErasedUser, parseTelegramUserId);
    await conversation.external(async (outside) => {
      try {
        // what this node accepted of the user's events is stored first, so the count covers it too
        await deps.services.caughtUp();
        const { app, userKey, stored } = await dataControls.preview(appName, telegramUserId, deps.actorOf(outside));
        await outside.reply(eraseQuestion(app, telegramUserId, stored), {
          ...HTML,
          reply_markup: eraseConfirmKeyboard(app.appId, userKeyText(userKey)),
        });
      } catch (failure) {
        // the app is gone or no longer the user's
        if (!(failure instanceof RegistryError)) throw failure;
        await outside.reply(failure.message);
      }
    });
  };
}

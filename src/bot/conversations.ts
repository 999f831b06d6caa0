// The bot's multi-step dialogs: registering a new app (bot address → domain → app name → token) and
// adding a domain. The questions themselves are in questions.ts.
import type { Context } from 'grammy';
import { parseAppName, parseBotAddress, parseDomain } from '../tokens/inputs.ts';
import { RegistryError } from '../tokens/registry.ts';
import type { BotDeps } from './context.ts';
import { analyticsKeyboard } from './keyboards.ts';
import { ask, type Dialog } from './questions.ts';
import { HTML, TEXT, tokenIssued } from './texts.ts';

// the bot's context type, also where the test harness takes it from
export type { BotContext } from './context.ts';

/** the dialogs' conversation ids, as stored with a dialog in progress */
export const DIALOG = { newToken: 'new-token', addDomain: 'add-domain' } as const;

export function newTokenDialog(deps: BotDeps) {
  const { registry, config } = deps.services;
  const domainRule = (text: string) => parseDomain(text, { allowLocalhost: config.allowLocalhostDomains });
  return async function newToken(conversation: Dialog, ctx: Context): Promise<void> {
    const bot = await ask(conversation, ctx, TEXT.askBot, parseBotAddress);
    const domain = await ask(conversation, ctx, TEXT.askDomain, domainRule);
    for (;;) {
      const appName = await ask(conversation, ctx, TEXT.askAppName, parseAppName);
      // the token is created and sent inside one external step, so the secret never enters the stored dialog state
      const taken = await conversation.external(async (outside) => {
        const actor = deps.actorOf(outside);
        try {
          const { token, app } = await registry.createApp(
            { appName, bot, domains: [domain], ownerTelegramId: actor.telegramId },
            actor,
          );
          await outside.reply(tokenIssued(token, app, config.publicUrl, true), {
            ...HTML,
            reply_markup: analyticsKeyboard(false),
          });
          return null;
        } catch (failure) {
          if (failure instanceof RegistryError && failure.code === 'app_exists') return failure.message;
          throw failure;
        }
      });
      if (taken === null) return;
      await ctx.reply(`${taken} Choose another name.`, HTML);
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
          await outside.reply(`✅ ${domain} added. Domains of ${app.appName}: ${app.domains.join(', ')}`, {
            reply_markup: analyticsKeyboard(false),
          });
          return null;
        } catch (failure) {
          if (failure instanceof RegistryError) return { code: failure.code, message: failure.message };
          throw failure;
        }
      });
      if (refusal === null) return;
      await ctx.reply(refusal.message);
      // the app is gone or not the user's: another domain would not help
      if (refusal.code === 'app_not_found') return;
    }
  };
}

// The bot's multi-step dialogs: registering a new app (bot address → domain → app name → token) and
// adding a domain. Every bad answer gets its specific explanation and the question again; /cancel leaves.
import type { Conversation, ConversationFlavor } from '@grammyjs/conversations';
import type { Context } from 'grammy';
import { parseAppName, parseBotAddress, parseDomain, type Parsed } from '../tokens/inputs.ts';
import { RegistryError, type Actor, type TokenRegistry } from '../tokens/registry.ts';
import { analyticsKeyboard } from './keyboards.ts';
import { TEXT, tokenIssued } from './texts.ts';

export type BotContext = ConversationFlavor<Context>;
type Dialog = Conversation<BotContext, Context>;

export interface DialogDeps {
  registry: TokenRegistry;
  allowLocalhost: boolean;
  publicUrl?: string;
  actorOf(ctx: Context): Actor;
}

const HTML = { parse_mode: 'HTML' } as const;

/** Asks until the answer parses; null when the user cancels. */
async function ask<T>(conversation: Dialog, ctx: Context, question: string, parse: (text: string) => Parsed<T>): Promise<T | null> {
  await ctx.reply(question, HTML);
  for (;;) {
    const answer = await conversation.waitFor('message:text', {
      otherwise: (other) => (other.callbackQuery ? other.answerCallbackQuery(TEXT.busy) : other.reply(TEXT.textPlease)),
    });
    const text = answer.message.text.trim();
    if (/^\/cancel(@\w+)?$/i.test(text)) {
      await answer.reply(TEXT.cancelled, { reply_markup: analyticsKeyboard(false) });
      return null;
    }
    const parsed = parse(text);
    if (parsed.ok) return parsed.value;
    await answer.reply(`${parsed.error}\n\n${question}`, HTML);
  }
}

export function newTokenDialog(deps: DialogDeps) {
  return async function newToken(conversation: Dialog, ctx: Context): Promise<void> {
    const bot = await ask(conversation, ctx, TEXT.askBot, parseBotAddress);
    if (bot === null) return;
    const domain = await ask(conversation, ctx, TEXT.askDomain, (text) => parseDomain(text, { allowLocalhost: deps.allowLocalhost }));
    if (domain === null) return;
    for (;;) {
      const appName = await ask(conversation, ctx, TEXT.askAppName, parseAppName);
      if (appName === null) return;
      // the token is created and sent inside one external step, so the secret never enters the stored dialog state
      const error = await conversation.external(async (outside) => {
        const actor = deps.actorOf(outside);
        try {
          const { token, app } = await deps.registry.createApp({ appName, bot, domains: [domain], ownerTelegramId: actor.telegramId }, actor);
          await outside.reply(tokenIssued(token, app, deps.publicUrl, true), { ...HTML, reply_markup: analyticsKeyboard(false) });
          return null;
        } catch (failure) {
          if (failure instanceof RegistryError) return failure.message;
          throw failure;
        }
      });
      if (error === null) return;
      await ctx.reply(`${error} Choose another name.`, HTML);
    }
  };
}

export function addDomainDialog(deps: DialogDeps) {
  return async function addDomain(conversation: Dialog, ctx: Context, appName: string): Promise<void> {
    for (;;) {
      const domain = await ask(conversation, ctx, TEXT.askNewDomain, (text) => parseDomain(text, { allowLocalhost: deps.allowLocalhost }));
      if (domain === null) return;
      const error = await conversation.external(async (outside) => {
        try {
          const app = await deps.registry.addDomain(appName, domain, deps.actorOf(outside));
          await outside.reply(`✅ ${domain} added. Domains of ${app.appName}: ${app.domains.join(', ')}`, { reply_markup: analyticsKeyboard(false) });
          return null;
        } catch (failure) {
          if (failure instanceof RegistryError) return failure.message;
          throw failure;
        }
      });
      if (error === null) return;
      await ctx.reply(error);
      if (error.startsWith('There is no')) return;
    }
  };
}

// One question of a dialog, asked as a conversation form field over the token rules' parsers: a bad
// answer gets its explanation and the question again, /cancel leaves the dialog, a button press or
// anything but text is answered and the question stays open.
import type { Conversation } from '@grammyjs/conversations';
import type { Context } from 'grammy';
import type { Parsed } from '../platform/parsed.ts';
import type { BotContext } from './context.ts';
import { analyticsKeyboard } from './keyboards.ts';
import { HTML, TEXT } from './texts.ts';

export type Dialog = Conversation<BotContext, Context>;

const CANCEL_COMMAND = /^\/cancel(@\w+)?$/i;
/** a bot's token as @BotFather gives it: sent by mistake, it is taken out of the chat */
const BOT_TOKEN_SHAPE = /^[0-9]+:[A-Za-z0-9_-]{20,}$/;
const CANCELLED = Symbol('cancelled');

/**
 * Asks until the answer parses and returns it; /cancel ends the whole dialog. why: why the question is asked again
 * (a refused answer), said in the same message before it
 */
export async function ask<T>(
  conversation: Dialog,
  ctx: Context,
  question: string,
  parse: (text: string) => Parsed<T>,
  why?: string,
): Promise<T> {
  await ctx.reply(why === undefined ? question : `${why}\n\n${question}`, HTML);
  const answer = await conversation.form.build<T | typeof CANCELLED, string | null>({
    // the reason is null for an update that carries no text at all
    validate: (reply) => {
      const text = reply.message?.text?.trim();
      if (text === undefined) return { ok: false, error: null };
      return CANCEL_COMMAND.test(text) ? { ok: true, value: CANCELLED } : parse(text);
    },
    action: async (reply, value) => {
      if (value === CANCELLED) await reply.reply(TEXT.cancelled, { reply_markup: analyticsKeyboard(false) });
    },
    otherwise: async (reply, reason) => {
      // a bot's token controls that bot: the chat should not keep it (a bot may delete what it is sent in private)
      if (BOT_TOKEN_SHAPE.test(reply.message?.text?.trim() ?? '')) await reply.deleteMessage().catch(() => undefined);
      if (reason !== null) await reply.reply(`${reason}\n\n${question}`, HTML);
      else if (reply.callbackQuery) await reply.answerCallbackQuery(TEXT.busy);
      else await reply.reply(TEXT.textPlease);
    },
  });
  if (answer === CANCELLED) return conversation.halt();
  return answer;
}

// One error boundary for the bot's screens: the registry's refusals and a read past its budget are sentences for the
// user (a button's alert or a message), said once here instead of in a try/catch around every action.
import type { BotError, NextFunction } from 'grammy';
import { budgetText, ReadBudgetError } from '../db/read-budget.ts';
import { RegistryError } from '../tokens/registry.ts';
import type { BotContext } from './context.ts';

/** The words a user sees for a refusal, or undefined for an error that is not theirs to read */
function refusalText(error: unknown): string | undefined {
  if (error instanceof RegistryError) return error.message;
  if (error instanceof ReadBudgetError)
    return error.reason === 'busy'
      ? 'Too many numbers are being read right now. Please try again in a minute.'
      : `The numbers took longer than ${budgetText(error.budgetMs)} to read. Please try again in a minute.`;
  return undefined;
}

/** grammY errorBoundary handler: tells a refusal, passes any other error on to `bot.catch` */
export async function tellRefusal({ error, ctx }: BotError<BotContext>, _next: NextFunction): Promise<void> {
  const text = refusalText(error);
  if (text === undefined) throw error;
  // a read past its budget may come after the screen answered its button, so it is a message then
  if (ctx.callbackQuery && error instanceof RegistryError) {
    await ctx.answerCallbackQuery({ text, show_alert: true }).catch(() => undefined);
    return;
  }
  await ctx.reply(text).catch(() => undefined);
}

// Every inline keyboard the bot sends leaves out its empty rows: grammY's row() always starts a new one, so a builder
// that ends a row twice (or ends the last one) would otherwise send a row without buttons.
import type { Transformer } from 'grammy';

type Markup = { inline_keyboard?: unknown[][] } | undefined;

/** a Bot API transformer for every call: messages, edits, alerts and dialogs alike */
export const withoutEmptyRows: Transformer = (prev, method, payload, signal) => {
  const markup = (payload as { reply_markup?: Markup }).reply_markup;
  if (!markup?.inline_keyboard?.some((row) => row.length === 0)) return prev(method, payload, signal);
  const rows = markup.inline_keyboard.filter((row) => row.length > 0);
  return prev(method, { ...payload, reply_markup: { ...markup, inline_keyboard: rows } } as typeof payload, signal);
};

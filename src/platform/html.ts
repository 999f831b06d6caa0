// HTML escaping for the site's pages and the bot's messages (Telegram's HTML mode).

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export interface EscapeOptions {
  /**
   * whether ' is escaped too (default): needed in single-quoted attributes. Telegram messages leave it as is,
   * so a snippet in a message reads the same when copied from the raw text.
   */
  apostrophe?: boolean;
}

export function escapeHtml(text: string, { apostrophe = true }: EscapeOptions = {}): string {
  return text.replace(apostrophe ? /[&<>"']/g : /[&<>"]/g, (char) => ENTITIES[char]!);
}

/** text for a message in Telegram's HTML mode (the bot's messages, alerts) */
export function escapeTelegramHtml(text: string): string {
  return escapeHtml(text, { apostrophe: false });
}

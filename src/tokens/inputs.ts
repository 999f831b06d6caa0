// Rules for what a user types when registering an app (bot address, mini app domain, app name) or names a user.
import net from 'node:net';
import type { Parsed } from '../platform/parsed.ts';

/** a Telegram user id typed by a person (erasure forms, the CLI): decimal digits, no sign, no leading zero */
export const USER_ID_DIGITS_PATTERN = '^[1-9][0-9]{0,19}$';

/** Telegram usernames are 5–32 letters, digits or "_", starting with a letter; a bot's ends in "bot" */
const BOT_USERNAME = /^[A-Za-z][A-Za-z0-9_]{1,28}[Bb][Oo][Tt]$/;

/** Accepts @name, name, t.me/name, https://t.me/name; returns "@name". */
export function parseBotAddress(input: string): Parsed<string> {
  const trimmed = input.trim();
  const match = /^(?:(?:https?:\/\/)?(?:www\.)?(?:t|telegram)\.me\/|@)?([^/?#\s]+)\/?$/i.exec(trimmed);
  const username = match?.[1] ?? '';
  if (!BOT_USERNAME.test(username)) {
    return {
      ok: false,
      error:
        'The bot address must be a Telegram bot username such as @my_app_bot or https://t.me/my_app_bot: ' +
        '5–32 letters, digits or _, starting with a letter and ending in "bot".',
    };
  }
  return { ok: true, value: `@${username}` };
}

/** a bot's numeric id as Telegram gives it: a positive integer below 2^53 */
const BOT_ID = /^[1-9][0-9]{0,15}$/;

/**
 * A bot's numeric id: the number before ":" in the token @BotFather gave. The token itself is refused without being
 * kept: it controls the bot, and the id is all that checking its launches takes.
 */
export function parseBotId(input: string): Parsed<string> {
  const value = input.trim();
  if (/^[0-9]+:[A-Za-z0-9_-]{20,}$/.test(value)) {
    return {
      ok: false,
      error:
        "That is the bot's token, which controls the bot: never send it anywhere. Send only the number before the " +
        '":" (the bot\'s id), and if the token was shared, revoke it with @BotFather (/revoke).',
    };
  }
  if (!BOT_ID.test(value) || !Number.isSafeInteger(Number(value))) {
    return {
      ok: false,
      error:
        'The bot\'s id is a number such as 7012345678: the part before ":" in the token @BotFather gave (send only ' +
        'that part).',
    };
  }
  return { ok: true, value };
}

/** how many apps a person may own, as an administrator types it: 1 to 1,000,000 */
export function parseAppLimit(input: string): Parsed<number> {
  const value = input.trim();
  if (!/^[1-9][0-9]{0,6}$/.test(value) || Number(value) > 1_000_000)
    return { ok: false, error: 'The number of apps must be a whole number from 1 to 1000000.' };
  return { ok: true, value: Number(value) };
}

/** Accepts a bare host or a URL and keeps the host (lowercase, punycode). IPs are refused. */
export function parseDomain(input: string, options: { allowLocalhost: boolean }): Parsed<string> {
  const trimmed = input.trim();
  let host: string;
  try {
    host = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`).hostname;
  } catch {
    return { ok: false, error: 'The domain must be a host name such as app.example.com or a URL on it.' };
  }
  if (net.isIP(host.replace(/^\[|\]$/g, '')) !== 0) {
    return { ok: false, error: 'The domain must be a host name, not an IP address.' };
  }
  if (host === 'localhost' || host.endsWith('.localhost')) {
    return options.allowLocalhost
      ? { ok: true, value: host }
      : { ok: false, error: 'localhost is not accepted here: use the public domain your mini app is served from.' };
  }
  if (!/^(?=.{1,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/.test(host)) {
    return { ok: false, error: 'The domain must be a host name such as app.example.com or a URL on it.' };
  }
  return { ok: true, value: host };
}

/** The analytics identifier: what the SDK sends as app_name. */
export function parseAppName(input: string): Parsed<string> {
  const value = input.trim();
  if (!/^[a-z0-9_-]{3,64}$/.test(value)) {
    return {
      ok: false,
      error: 'The app name must be 3–64 characters: lowercase letters, digits, "_" or "-".',
    };
  }
  return { ok: true, value };
}

/**
 * A Telegram user id as an owner types it (or a site form sends it): the digits the SDK sends as user_id, the
 * way ingestion accepts them, so the same id gives the same user key.
 */
export function parseTelegramUserId(input: unknown): Parsed<string> {
  const value = typeof input === 'number' && Number.isSafeInteger(input) ? String(input) : input;
  if (typeof value !== 'string' || !new RegExp(USER_ID_DIGITS_PATTERN).test(value.trim())) {
    return { ok: false, error: 'A Telegram user id is a positive number such as 123456789.' };
  }
  return { ok: true, value: value.trim() };
}

// Who is signing in: a Telegram Login Widget payload or Mini App initData, both verified against the
// bot token with a freshness window; anything unsigned, tampered or stale is refused.
import crypto from 'node:crypto';
import { parse, validate } from '@telegram-apps/init-data-node';

export interface TelegramIdentity {
  id: string;
  name: string;
}

/** how old a login payload or initData may be */
export const MAX_AUTH_AGE_SECONDS = 24 * 3600;

function displayName(user: { first_name?: string; last_name?: string; username?: string; firstName?: string; lastName?: string }): string {
  const name = [user.first_name ?? user.firstName, user.last_name ?? user.lastName].filter(Boolean).join(' ');
  return name || (user.username ? `@${user.username}` : 'Telegram user');
}

/**
 * Telegram Login Widget: hash = HMAC-SHA256(key = SHA256(bot token), "key=value" lines of every other
 * field, sorted). https://core.telegram.org/widgets/login#checking-authorization
 */
export function verifyLoginWidget(fields: Record<string, string>, botToken: string, now = new Date()): TelegramIdentity | null {
  const { hash, ...data } = fields;
  if (!hash || !/^\d{1,20}$/.test(data.id ?? '') || !/^\d{1,12}$/.test(data.auth_date ?? '')) return null;
  const checkString = Object.keys(data)
    .sort()
    .map((key) => `${key}=${data[key]}`)
    .join('\n');
  const secret = crypto.createHash('sha256').update(botToken).digest();
  const expected = crypto.createHmac('sha256', secret).update(checkString).digest();
  const given = Buffer.from(hash, 'hex');
  if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return null;
  const age = now.getTime() / 1000 - Number(data.auth_date);
  if (age > MAX_AUTH_AGE_SECONDS || age < -300) return null;
  return { id: data.id!, name: displayName(data) };
}

/** Mini App mode: initData of the dashboard opened as a web app from the bot. */
export function verifyInitData(initData: string, botToken: string): TelegramIdentity | null {
  try {
    validate(initData, botToken, { expiresIn: MAX_AUTH_AGE_SECONDS });
    const user = parse(initData).user;
    return user ? { id: String(user.id), name: displayName(user as never) } : null;
  } catch {
    return null;
  }
}

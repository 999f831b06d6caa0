// Who is signing in: a Telegram Login Widget payload or Mini App initData, both verified against the
// bot token with a freshness window; anything unsigned, tampered or stale is refused. A verified proof
// comes with its signature and expiry, so the caller can make sure it signs in only once.
import crypto from 'node:crypto';
import { parse, validate } from '@telegram-apps/init-data-node';

export interface TelegramIdentity {
  id: string;
  name: string;
}

/** how old a login payload or initData may be */
export const MAX_AUTH_AGE_SECONDS = 24 * 3600;
/** how far in the future a widget's auth_date may be (clock skew) */
const MAX_CLOCK_SKEW_SECONDS = 300;

export interface VerifiedSignIn {
  identity: TelegramIdentity;
  /** the proof's signature: the same payload sent again has the same one */
  signature: string;
  /** when the proof stops being accepted anyway */
  expiresAt: Date;
}

function displayName(user: {
  first_name?: string;
  last_name?: string;
  username?: string;
  firstName?: string;
  lastName?: string;
}): string {
  const name = [user.first_name ?? user.firstName, user.last_name ?? user.lastName].filter(Boolean).join(' ');
  return name || (user.username ? `@${user.username}` : 'Telegram user');
}

/**
 * Telegram Login Widget: hash = HMAC-SHA256(key = SHA256(bot token), "key=value" lines of every other
 * field, sorted). https://core.telegram.org/widgets/login#checking-authorization
 */
export function verifyLoginWidget(
  fields: Record<string, string>,
  botToken: string,
  now = new Date(),
): VerifiedSignIn | null {
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
  const authDate = Number(data.auth_date);
  const age = now.getTime() / 1000 - authDate;
  if (age > MAX_AUTH_AGE_SECONDS || age < -MAX_CLOCK_SKEW_SECONDS) return null;
  return {
    identity: { id: data.id!, name: displayName(data) },
    signature: expected.toString('hex'),
    expiresAt: new Date((authDate + MAX_AUTH_AGE_SECONDS) * 1000),
  };
}

/** Mini App mode: initData of the dashboard opened as a web app from the bot. */
export function verifyInitData(initData: string, botToken: string): VerifiedSignIn | null {
  try {
    validate(initData, botToken, { expiresIn: MAX_AUTH_AGE_SECONDS });
    const { user, hash, auth_date: authDate } = parse(initData);
    if (!user || !hash) return null;
    return {
      identity: { id: String(user.id), name: displayName(user as never) },
      signature: hash.toLowerCase(),
      expiresAt: new Date(authDate.getTime() + MAX_AUTH_AGE_SECONDS * 1000),
    };
  } catch {
    return null;
  }
}

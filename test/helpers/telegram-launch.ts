// Telegram-signed launch data made in tests, exactly as Telegram builds initData: a key pair of the test's own (its
// public key given to the service as TELEGRAM_PUBLIC_KEY), the data-check string "<bot id>:WebAppData" and the
// fields sorted by key, an Ed25519 signature in base64url without padding, and a hash (Telegram's HMAC with the bot's
// token, which a third party cannot check and the service ignores).
import crypto, { type KeyObject } from 'node:crypto';

export interface LaunchSigner {
  /** the public key as TELEGRAM_PUBLIC_KEY takes it: 64 hex digits */
  publicKeyHex: string;
  sign(launch: LaunchData): string;
}

export interface LaunchUser {
  id: number;
  first_name?: string;
  last_name?: string;
  username?: string;
  language_code?: string;
  is_premium?: boolean;
  photo_url?: string;
}

export interface LaunchData {
  botId: number | string;
  user: LaunchUser;
  /** seconds since the epoch; default now */
  authDate?: number;
  startParam?: string;
  /** other fields, as Telegram adds them (chat_type, chat_instance, …) */
  extra?: Record<string, string>;
}

/** a test user whose every field is personal: none of them may reach disk or a log */
export const PRIVATE_USER: LaunchUser = {
  id: 7_345_112_908,
  first_name: 'Zebedeus',
  last_name: 'Quimbleworth',
  username: 'zebedeus_quimble_42',
  language_code: 'nl',
  is_premium: true,
  photo_url: 'https://t.me/i/userpic/320/zebedeus-quimbleworth-portrait.svg',
};

export function launchSigner(privateKey?: KeyObject): LaunchSigner {
  const pair = privateKey
    ? { privateKey, publicKey: crypto.createPublicKey(privateKey) }
    : crypto.generateKeyPairSync('ed25519');
  const raw = pair.publicKey.export({ format: 'jwk' }).x!;
  return {
    publicKeyHex: Buffer.from(raw, 'base64url').toString('hex'),
    sign: (launch) => signLaunch(launch, pair.privateKey),
  };
}

/** initData as Telegram.WebApp.initData holds it (URL-encoded), signed with the given key */
export function signLaunch(launch: LaunchData, privateKey: KeyObject): string {
  const fields: Record<string, string> = {
    // every launch has its own query id, so two launches of one user in one second are two signatures
    query_id: `AAH${crypto.randomBytes(12).toString('base64url')}`,
    user: JSON.stringify(launch.user),
    auth_date: String(launch.authDate ?? Math.floor(Date.now() / 1000)),
    ...(launch.startParam === undefined ? {} : { start_param: launch.startParam }),
    chat_type: 'sender',
    chat_instance: '-3788475317572404878',
    ...launch.extra,
  };
  const checked = `${launch.botId}:WebAppData\n${Object.keys(fields)
    .sort()
    .map((key) => `${key}=${fields[key]}`)
    .join('\n')}`;
  const signature = crypto.sign(null, Buffer.from(checked), privateKey).toString('base64url');
  const hash = crypto.createHmac('sha256', 'not-the-bot-token').update(checked).digest('hex');
  return new URLSearchParams({ ...fields, signature, hash }).toString();
}

/** the same launch data with one field's value changed after signing */
export function alteredLaunch(initData: string, field: string, value: string): string {
  const params = new URLSearchParams(initData);
  params.set(field, value);
  return params.toString();
}

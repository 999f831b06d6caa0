// Checks the launch data Telegram signed (initData) that an app-init carries, as a third party may (Bot API 8.0,
// "Validating data for third-party use"): an Ed25519 signature over "<bot id>:WebAppData" and the launch's fields,
// a recent auth_date, and the signed user being the event's user. Only the verdict leaves this module: the launch
// data (names, username, photo, language, chat) is read here and forgotten.
import crypto, { type KeyObject } from 'node:crypto';
import { isoDayOf } from '../days.ts';

/**
 * What ingest can tell of an app-init's launch data. The event insert tells two more apart (src/events/write/rollups/
 * launches.ts): `replayed`, a signature that already verified another session, and `other_bot`, a signature that does
 * not check for this app's bot but verified a launch of another app's.
 */
export type LaunchCheck =
  | 'verified'
  | 'no_proof'
  | 'malformed'
  | 'no_bot_id'
  | 'bad_signature'
  | 'expired'
  | 'other_user'
  | 'test_environment';

/** every outcome a launch is counted under, in the order surfaces list them */
export const LAUNCH_OUTCOMES = [
  'verified',
  'no_proof',
  'no_bot_id',
  'bad_signature',
  'other_bot',
  'expired',
  'other_user',
  'replayed',
  'test_environment',
  'malformed',
] as const;

export type LaunchOutcome = (typeof LAUNCH_OUTCOMES)[number];

export interface LaunchVerdict {
  check: LaunchCheck;
  /** for a verified launch: the UTC day of its signed auth_date, the day it counts on */
  day?: string;
  /** for a signature read (verified or not): a keyed hash of it, so a signature verifies one session only */
  proof?: Buffer;
}

/** the fields of an event that carry the launch proof: taken out of the event before anything stores it */
export const LAUNCH_PROOF_FIELDS = ['init_data', 'init_data_env'] as const;

/** Telegram's launch data is a few hundred bytes; a photo URL and a chat make it longer, never this long */
const MAX_INIT_DATA_LENGTH = 16_384;
/** an auth_date this far ahead of the service's clock is not a launch that happened */
const MAX_FUTURE_SECONDS = 600;
const SIGNATURE_BYTES = 64;

export interface LaunchCheckerOptions {
  /** Telegram's public key (hex), or a staging installation's */
  publicKeyHex: string;
  /** the key of Telegram's test environment (hex), for launches reported with init_data_env "test" */
  testPublicKeyHex: string;
  maxAgeSeconds: number;
  /** a keyed hash of a signature (its bytes): the proof kept of it */
  proofOf: (signature: Buffer) => Buffer;
  now?: () => number;
}

/** an Ed25519 public key from its 32 raw bytes in hex */
function ed25519Key(hex: string): KeyObject {
  return crypto.createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(hex, 'hex').toString('base64url') },
    format: 'jwk',
  });
}

/** an Ed25519 signature checked on libuv's thread pool (node:crypto's callback form) */
function verifyOffThread(data: Buffer, key: KeyObject, signature: Buffer): Promise<boolean> {
  return new Promise((resolve) =>
    crypto.verify(null, data, key, signature, (error, valid) => resolve(error === null && valid)),
  );
}

/** the signed fields of launch data: all but hash and signature, as they were decoded */
interface LaunchFields {
  pairs: [string, string][];
  signature: Buffer;
  authDate: number;
  userId: string;
}

/** the launch data's fields, or null when it cannot be the data Telegram signs */
function readFields(initData: string): LaunchFields | null {
  if (initData.length === 0 || initData.length > MAX_INIT_DATA_LENGTH) return null;
  const pairs: [string, string][] = [];
  let signature: string | undefined;
  let authDate: string | undefined;
  let user: string | undefined;
  for (const [key, value] of new URLSearchParams(initData)) {
    if (key === 'hash') continue;
    if (key === 'signature') {
      signature = value;
      continue;
    }
    if (key === 'auth_date') authDate = value;
    else if (key === 'user') user = value;
    pairs.push([key, value]);
  }
  if (signature === undefined || authDate === undefined || user === undefined) return null;
  if (!/^[A-Za-z0-9_-]{86}$/.test(signature) || !/^[1-9][0-9]{0,11}$/.test(authDate)) return null;
  let id: unknown;
  try {
    id = (JSON.parse(user) as { id?: unknown } | null)?.id;
  } catch {
    return null;
  }
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return null;
  return {
    pairs,
    signature: Buffer.from(signature, 'base64url'),
    authDate: Number(authDate),
    userId: String(id),
  };
}

/** the data-check string Telegram signs: "<bot id>:WebAppData", then each field as key=value sorted by key */
export function dataCheckString(botId: string, pairs: readonly [string, string][]): string {
  const sorted = [...pairs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `${botId}:WebAppData\n${sorted.map(([key, value]) => `${key}=${value}`).join('\n')}`;
}

export class LaunchChecker {
  private readonly productionKey: KeyObject;
  private readonly testKey: KeyObject;
  private readonly now: () => number;

  constructor(private readonly options: LaunchCheckerOptions) {
    this.productionKey = ed25519Key(options.publicKeyHex);
    this.testKey = ed25519Key(options.testPublicKeyHex);
    this.now = options.now ?? Date.now;
  }

  /**
   * The verdict on an app-init's launch data (the event's init_data and init_data_env), for an app whose bot has the
   * given id (null: not known) and the event's user id (decimal digits). The signature is verified on libuv's thread
   * pool: the HTTP thread goes on with other requests meanwhile.
   */
  async check(event: Record<string, unknown>, botId: string | null, userId: string): Promise<LaunchVerdict> {
    const initData = event.init_data;
    if (initData === undefined || initData === null) return { check: 'no_proof' };
    if (typeof initData !== 'string') return { check: 'malformed' };
    const fields = readFields(initData);
    if (!fields || fields.signature.length !== SIGNATURE_BYTES) return { check: 'malformed' };
    if (botId === null) return { check: 'no_bot_id' };
    const proof = this.options.proofOf(fields.signature);
    const key = event.init_data_env === 'test' ? this.testKey : this.productionKey;
    const signed = Buffer.from(dataCheckString(botId, fields.pairs));
    if (!(await verifyOffThread(signed, key, fields.signature))) return { check: 'bad_signature', proof };
    const nowSeconds = this.now() / 1000;
    if (fields.authDate < nowSeconds - this.options.maxAgeSeconds || fields.authDate > nowSeconds + MAX_FUTURE_SECONDS)
      return { check: 'expired' };
    if (fields.userId !== userId) return { check: 'other_user' };
    // Telegram signed it, but in its test environment, where anyone makes accounts at will: counted apart, never as a
    // verified launch, so a test app neither ranks in the catalog nor shows test users as verified
    if (key === this.testKey) return { check: 'test_environment' };
    return { check: 'verified', day: isoDayOf(fields.authDate * 1000), proof };
  }
}

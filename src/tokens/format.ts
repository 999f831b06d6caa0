// Access token format: a recognisable prefix, a nanoid secret and a keyed checksum; only its sha-256 is stored.
import crypto from 'node:crypto';
import { customAlphabet } from 'nanoid';

/** secret scanners can match /tma_[0-9A-Za-z]{40}/ */
export const TOKEN_PREFIX = 'tma_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_LENGTH = 40;
/** about 2^35.7 values: a made-up token passes the check once in tens of billions of tries */
const CHECKSUM_LENGTH = 6;
const newSecret = customAlphabet(ALPHABET, TOKEN_LENGTH - CHECKSUM_LENGTH);
/** the derived key (src/secret.ts) the checksum is made with */
export const TOKEN_CHECKSUM_PURPOSE = 'token-checksum';
const TOKEN_PATTERN = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${TOKEN_LENGTH}}$`);

/**
 * The last characters of a token: an HMAC of the rest with the service's key, so that any node can tell a
 * token it issued from a made-up one without asking the store (the key never leaves the service, so a
 * checksum cannot be computed from outside).
 */
function checksum(body: string, key: Buffer): string {
  let value = crypto.createHmac('sha256', key).update(body).digest().readUIntBE(0, 6);
  let text = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    text += ALPHABET[value % ALPHABET.length];
    value = Math.floor(value / ALPHABET.length);
  }
  return text;
}

export function generateToken(checksumKey: Buffer): string {
  const body = TOKEN_PREFIX + newSecret();
  return body + checksum(body, checksumKey);
}

/** the token's shape: prefix and 40 letters and digits (tokens issued without a checksum have it too) */
export function hasTokenShape(token: string): boolean {
  return TOKEN_PATTERN.test(token);
}

export function hasValidChecksum(token: string, checksumKey: Buffer): boolean {
  if (!hasTokenShape(token)) return false;
  const split = token.length - CHECKSUM_LENGTH;
  return checksum(token.slice(0, split), checksumKey) === token.slice(split);
}

export function hashToken(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}

/** the part shown in lists so an owner can tell tokens apart: "tma_AbC1…" */
export function displayPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 6);
}

/**
 * A header value we can even look up: present, printable ASCII, of sane length. Anything else is
 * "not specified or specified incorrectly"; a well-formed value nobody issued is "invalid".
 */
export function isWellFormedToken(value: string | undefined): value is string {
  return value !== undefined && value.length >= 8 && value.length <= 512 && /^[\x21-\x7e]+$/.test(value);
}

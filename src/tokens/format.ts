// Access token format: a recognisable prefix plus a nanoid secret; only its sha-256 is ever stored.
import crypto from 'node:crypto';
import { customAlphabet } from 'nanoid';

/** secret scanners can match /tma_[0-9A-Za-z]{40}/ */
export const TOKEN_PREFIX = 'tma_';
const SECRET_LENGTH = 40;
const newSecret = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', SECRET_LENGTH);

export function generateToken(): string {
  return TOKEN_PREFIX + newSecret();
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

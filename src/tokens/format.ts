// Credential formats: a recognisable prefix, a nanoid secret and a keyed checksum; only a credential's sha-256 is
// stored. App tokens, server keys, read keys and share link secrets each have one (CredentialFormat).
import crypto from 'node:crypto';
import { customAlphabet } from 'nanoid';

/** secret scanners can match /tma_[0-9A-Za-z]{40}/ */
export const TOKEN_PREFIX = 'tma_';
const ALPHANUMERIC = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** nanoid's URL alphabet: the random part of keys and share links */
const URL_ALPHABET = `${ALPHANUMERIC}_-`;
/** about 2^35.7 values: a made-up credential passes the check once in tens of billions of tries */
const CHECKSUM_LENGTH = 6;
/** the derived key (src/tokens/secret.ts) the checksum is made with */
export const TOKEN_CHECKSUM_PURPOSE = 'token-checksum';

/** what a kind of credential looks like: its prefix, then `length` characters of `alphabet` */
export interface CredentialFormat {
  prefix: string;
  length: number;
  alphabet: string;
  /** the whole credential's shape */
  pattern: RegExp;
  /** makes the random part before the checksum */
  random: () => string;
}

const escapeClass = (alphabet: string) => alphabet.replace(/[\\\]^-]/g, '\\$&');

export function credentialFormat(prefix: string, length: number, alphabet: string): CredentialFormat {
  return {
    prefix,
    length,
    alphabet,
    pattern: new RegExp(`^${prefix}[${escapeClass(alphabet)}]{${length}}$`),
    random: customAlphabet(alphabet, length - CHECKSUM_LENGTH),
  };
}

export const TOKEN_FORMAT = credentialFormat(TOKEN_PREFIX, 40, ALPHANUMERIC);

/** the format of per-app keys and share links: the prefix and 32 characters of nanoid's URL alphabet */
export const urlSafeFormat = (prefix: string) => credentialFormat(prefix, 32, URL_ALPHABET);

/**
 * The last characters of a credential: an HMAC of the rest (its prefix included) with the service's key, so that
 * any node can tell a credential it issued from a made-up one without asking the store (the key never leaves the
 * service, so a checksum cannot be computed from outside). Written in letters and digits, which every format allows.
 */
function checksum(body: string, key: Buffer): string {
  let value = crypto.createHmac('sha256', key).update(body).digest().readUIntBE(0, 6);
  let text = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    text += ALPHANUMERIC[value % ALPHANUMERIC.length];
    value = Math.floor(value / ALPHANUMERIC.length);
  }
  return text;
}

export function generateCredential(format: CredentialFormat, checksumKey: Buffer): string {
  const body = format.prefix + format.random();
  return body + checksum(body, checksumKey);
}

export function generateToken(checksumKey: Buffer): string {
  return generateCredential(TOKEN_FORMAT, checksumKey);
}

/** the token's shape: prefix and 40 letters and digits (tokens issued without a checksum have it too) */
export function hasTokenShape(token: string): boolean {
  return TOKEN_FORMAT.pattern.test(token);
}

/** the credential has its format's shape and a checksum made with the key */
export function hasValidChecksum(value: string, checksumKey: Buffer, format: CredentialFormat = TOKEN_FORMAT): boolean {
  if (!format.pattern.test(value)) return false;
  const split = value.length - CHECKSUM_LENGTH;
  return checksum(value.slice(0, split), checksumKey) === value.slice(split);
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

/** RFC 6750: the scheme is case-insensitive and followed by one or more spaces (tabs tolerated) */
const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * The credential of an `Authorization: Bearer …` header, undefined for anything else: `bearer KEY`, `BEARER  KEY`
 * and `Bearer KEY` name the same credential, so limits keyed on it treat them as one client.
 */
export function bearerCredential(header: unknown): string | undefined {
  return typeof header === 'string' ? BEARER.exec(header.trim())?.[1] : undefined;
}

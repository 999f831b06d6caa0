// The service secret (SECRET, SECRET_FILE or DATA_DIR/secret) and the keys derived from it for pseudonyms and hashes.
import { named } from '../db/named-sql.ts';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../platform/config.ts';
import { readOrCreateFile } from '../platform/read-or-create.ts';
import type { SqlRunner } from '../db/sql.ts';

export class Secrets {
  private readonly derived = new Map<string, Buffer>();

  constructor(private readonly secret: Buffer) {}

  /** a key for one purpose, so that hashes made for different purposes never match */
  key(purpose: string): Buffer {
    let key = this.derived.get(purpose);
    if (!key) {
      key = crypto.createHmac('sha256', this.secret).update(purpose).digest();
      this.derived.set(purpose, key);
    }
    return key;
  }

  hmac(purpose: string, data: string): Buffer {
    return crypto.createHmac('sha256', this.key(purpose)).update(data).digest();
  }

  /**
   * A keyed hash short enough for a key or an identifier (22 base64url characters, 132 bits). The values are
   * stored (owners, dialog state): the form must never change.
   */
  shortHash(purpose: string, data: string): string {
    return this.hmac(purpose, data).toString('base64url').slice(0, 22);
  }

  fingerprint(): string {
    return this.hmac('fingerprint', 'v1').toString('hex').slice(0, 16);
  }
}

function readOrCreateSecretFile(dataDir: string): string {
  return readOrCreateFile(path.join(dataDir, 'secret'), () => crypto.randomBytes(32).toString('base64url'));
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/**
 * Where the secret lives when it lives in DATA_DIR (generated there, or a SECRET_FILE inside it), else null.
 * A copy of DATA_DIR then holds the database and the key of its pseudonyms together: trying every user id of
 * a range against the copy reverses them in seconds.
 */
export function secretInDataDir(config: { secret?: string; secretFile?: string; dataDir: string }): string | null {
  if (config.secret !== undefined && config.secretFile === undefined) return null;
  const file = config.secretFile ?? path.join(config.dataDir, 'secret');
  const relative = path.relative(realPath(config.dataDir), realPath(file));
  return relative !== '' && relative.split(path.sep)[0] !== '..' && !path.isAbsolute(relative) ? file : null;
}

/**
 * Loads the secret and checks it against the fingerprint kept in the database, so nodes (or a restored
 * DATA_DIR) with a different secret refuse to start instead of silently splitting every user in two.
 */
export async function loadSecrets(config: { secret?: string; dataDir: string }, sql: SqlRunner): Promise<Secrets> {
  const secrets = new Secrets(Buffer.from(config.secret ?? readOrCreateSecretFile(config.dataDir)));
  const fingerprint = secrets.fingerprint();
  await sql.query(
    ...named(
      `INSERT INTO settings (key, value) VALUES ('secret_fingerprint', {{fingerprint}}) ON CONFLICT (key) DO NOTHING`,
      {
        fingerprint,
      },
    ),
  );
  const [row] = await sql.query<{ value: string }>(`SELECT value FROM settings WHERE key = 'secret_fingerprint'`);
  if (row?.value !== fingerprint) {
    throw new ConfigError(
      'this database was set up with a different secret: give every node the same SECRET ' +
        '(or the DATA_DIR/secret file the database was created with)',
    );
  }
  return secrets;
}

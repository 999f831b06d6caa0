// Chat ids of alert recipients, encrypted at rest with a key derived from the service secret: a copy of the database
// alone does not tell which Telegram account owns which app.
import crypto from 'node:crypto';
import type { Secrets } from '../tokens/secret.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class ChatCipher {
  private readonly key: Buffer;

  constructor(secrets: Secrets) {
    this.key = secrets.key('alert-chat');
  }

  seal(chatId: string): string {
    const iv = crypto.randomBytes(IV_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(chatId, 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  }

  open(sealed: string): string {
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, IV_BYTES));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}

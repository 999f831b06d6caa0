// Keyed hashes that replace raw identifiers: a per-app user key and a per-app event identity.
import crypto from 'node:crypto';
import type { Secrets } from '../../tokens/secret.ts';

const KEY_BYTES = 16;
/**
 * An event key starts with the client's time (6 bytes, epoch ms), then a keyed hash of the content. Keys of
 * one app then grow with time, so the primary key is appended to instead of written at random leaf pages,
 * which costs PostgreSQL about half the CPU per inserted key once an app has many events.
 */
const TIME_BYTES = 6;
const MAX_TIME = 2 ** (8 * TIME_BYTES);

export class Pseudonymiser {
  private readonly appKeys = new Map<number, Buffer>();

  constructor(private readonly secrets: Secrets) {}

  /**
   * The same user gets unrelated keys in different apps, and the raw id cannot be recovered without the secret.
   * userId is in decimal digits, so 123 sent as a number or as a string is one user.
   */
  userKey(appId: number, userId: string): Buffer {
    return crypto.createHmac('sha256', this.appKey(appId)).update(userId).digest().subarray(0, KEY_BYTES);
  }

  /**
   * sentAt is the client's time as sent, null when the event has none that can be read. With one, the time
   * tells two sends of the same content apart, and a retry (same time, same content) gets the same key, so it
   * is stored once. Without one, nothing tells a retry from a second identical event (two real clicks): the
   * key is the receive time and random bytes, so every such event is stored.
   */
  eventKey(appId: number, serialisedEvent: string, sentAt: number | null, receivedAt: number): Buffer {
    const key = Buffer.allocUnsafe(KEY_BYTES);
    if (sentAt === null) {
      key.writeUIntBE(receivedAt >= 0 && receivedAt < MAX_TIME ? Math.floor(receivedAt) : 0, 0, TIME_BYTES);
      return crypto.randomFillSync(key, TIME_BYTES);
    }
    key.writeUIntBE(sentAt >= 0 && sentAt < MAX_TIME ? Math.floor(sentAt) : 0, 0, TIME_BYTES);
    this.secrets.hmac('event', `${appId}\n${serialisedEvent}`).copy(key, TIME_BYTES, 0, KEY_BYTES - TIME_BYTES);
    return key;
  }

  private appKey(appId: number): Buffer {
    let key = this.appKeys.get(appId);
    if (!key) {
      key = this.secrets.hmac('user', String(appId));
      this.appKeys.set(appId, key);
    }
    return key;
  }
}

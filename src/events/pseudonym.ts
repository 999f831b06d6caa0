// Keyed hashes that replace raw identifiers: a per-app user key and a per-app event identity.
import crypto from 'node:crypto';
import type { Secrets } from '../secret.ts';

const KEY_BYTES = 16;

export class Pseudonymiser {
  private readonly appKeys = new Map<number, Buffer>();

  constructor(private readonly secrets: Secrets) {}

  /** the same user gets unrelated keys in different apps, and the raw id cannot be recovered without the secret */
  userKey(appId: number, userId: number): Buffer {
    return crypto.createHmac('sha256', this.appKey(appId)).update(String(userId)).digest().subarray(0, KEY_BYTES);
  }

  /** identical event content (a retried batch) always gets the same key, so it is stored once */
  eventKey(appId: number, serialisedEvent: string): Buffer {
    return this.secrets.hmac('event', `${appId}\n${serialisedEvent}`).subarray(0, KEY_BYTES);
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

// One-time login links for operators (`cli login-link --telegram-id`): a signed, expiring token in the
// URL; the database only remembers used nonces, so a link works once and no Telegram id is stored.
import crypto from 'node:crypto';
import type { PrismaClient } from '../db/store.ts';
import type { Secrets } from './secret.ts';
import { SingleUseProofs } from './single-use.ts';

const LINK_SECONDS = 15 * 60;

interface LinkPayload {
  id: string;
  exp: number;
  nonce: string;
}

export class LoginLinks {
  private readonly used: SingleUseProofs;

  constructor(
    prisma: PrismaClient,
    private readonly secrets: Secrets,
  ) {
    this.used = new SingleUseProofs(prisma);
  }

  create(telegramId: string, baseUrl: string): string {
    const payload: LinkPayload = {
      id: telegramId,
      exp: Math.floor(Date.now() / 1000) + LINK_SECONDS,
      nonce: crypto.randomBytes(16).toString('base64url'),
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${baseUrl.replace(/\/+$/, '')}/login/link?token=${body}.${this.sign(body)}`;
  }

  /** the Telegram id the link was made for, or null when it is forged, expired or used */
  async redeem(token: string): Promise<string | null> {
    const [body, signature] = token.split('.');
    if (!body || !signature) return null;
    const expected = Buffer.from(this.sign(body));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return null;
    let payload: LinkPayload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as LinkPayload;
    } catch {
      return null;
    }
    if (
      typeof payload?.id !== 'string' ||
      typeof payload.nonce !== 'string' ||
      typeof payload.exp !== 'number' ||
      payload.exp < Date.now() / 1000
    )
      return null;
    return (await this.used.claim('link', payload.nonce, new Date(payload.exp * 1000))) ? payload.id : null;
  }

  private sign(body: string): string {
    return this.secrets.hmac('login-link', body).toString('base64url');
  }
}

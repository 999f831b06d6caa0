// Revocable site sessions: the cookie holds a random id, the database its hash with the keyed hash of the
// user's Telegram id, expiry and revocation. A short cache keeps lookups cheap; ending a session clears
// it here at once, and another node (or the CLI) honours the revocation within CACHE_MS.
import crypto from 'node:crypto';
import type { PrismaClient } from '../db/store.ts';

export const SESSION_SECONDS = 7 * 24 * 3600;
/** how long a node trusts what it read about a session */
export const CACHE_MS = 2_000;
const CACHE_MAX = 10_000;

interface CachedSession {
  userKey: string;
  miniApp: boolean;
  expiresAt: number;
  revoked: boolean;
}

export interface LiveSession {
  miniApp: boolean;
}

function idHash(id: string): string {
  return crypto.createHash('sha256').update(id).digest('base64url');
}

export class SiteSessions {
  private readonly cache = new Map<string, { session: CachedSession | null; until: number }>();
  /** moves before and after every revocation made here: a lookup that overlapped one is not cached */
  private revocations = 0;

  constructor(
    private readonly prisma: PrismaClient,
    /** the keyed hash of a Telegram id, the same one apps.owner_key holds */
    private readonly userKey: (telegramId: string) => string,
  ) {}

  /** a new session for this user; the returned id goes into the cookie and is never stored */
  async start(telegramId: string, options: { miniApp: boolean }): Promise<string> {
    const id = crypto.randomBytes(32).toString('base64url');
    await this.prisma.siteSession.deleteMany({ where: { expiresAt: { lt: new Date() } } });
    await this.prisma.siteSession.create({
      data: {
        idHash: idHash(id),
        userKey: this.userKey(telegramId),
        miniApp: options.miniApp,
        expiresAt: new Date(Date.now() + SESSION_SECONDS * 1000),
      },
    });
    return id;
  }

  /** the session with this id when it is live and belongs to this user, otherwise null */
  async find(id: string, telegramId: string): Promise<LiveSession | null> {
    const key = idHash(id);
    const now = Date.now();
    let entry = this.cache.get(key);
    if (!entry || entry.until <= now) {
      const before = this.revocations;
      const row = await this.prisma.siteSession.findUnique({ where: { idHash: key } });
      const session = row && {
        userKey: row.userKey,
        miniApp: row.miniApp,
        expiresAt: row.expiresAt.getTime(),
        revoked: row.revokedAt !== null,
      };
      entry = { session, until: now + CACHE_MS };
      if (before === this.revocations) this.remember(key, entry);
    }
    const { session } = entry;
    if (!session || session.revoked || session.expiresAt <= now || session.userKey !== this.userKey(telegramId))
      return null;
    return { miniApp: session.miniApp };
  }

  /** sign-out: this session id stops working everywhere */
  async end(id: string): Promise<void> {
    const key = idHash(id);
    this.revocations++;
    this.cache.delete(key);
    await this.prisma.siteSession.updateMany({
      where: { idHash: key, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    this.revocations++;
    this.cache.delete(key);
  }

  /** ends every live session of a user (an administrator's action); returns how many were live */
  async endAllOf(telegramId: string): Promise<number> {
    const userKey = this.userKey(telegramId);
    this.revocations++;
    const { count } = await this.prisma.siteSession.updateMany({
      where: { userKey, revokedAt: null, expiresAt: { gt: new Date() } },
      data: { revokedAt: new Date() },
    });
    this.revocations++;
    for (const [key, entry] of this.cache) if (entry.session?.userKey === userKey) this.cache.delete(key);
    return count;
  }

  private remember(key: string, entry: { session: CachedSession | null; until: number }): void {
    this.cache.delete(key);
    if (this.cache.size >= CACHE_MAX) {
      const now = Date.now();
      for (const [old, cached] of this.cache) if (cached.until <= now) this.cache.delete(old);
      if (this.cache.size >= CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
    }
    this.cache.set(key, entry);
  }
}

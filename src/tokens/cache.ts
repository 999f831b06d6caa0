// In-memory credential lookup cache (app tokens, server keys, read keys, share links), negative answers included:
// fresh for 1 s, refreshed in the background, and past 4 s asked again, so a revocation or domain edit made on any
// node takes effect everywhere within 5 s while the store answers.
// While it does not, the last grant it gave stands (a revocation needs the store too): events go on into
// the durable log. After a failed load it does not ask the store again for 1 s.
import type { PrismaClient } from '../db/store.ts';
import { hashToken } from './format.ts';
import { RecentAnswers } from './recent-answers.ts';

export interface TokenGrant {
  appId: number;
  appName: string;
  domains: string[];
  /** the app's bot's numeric id (decimal digits), which Telegram signs its launches for; null: not given */
  botId: string | null;
  /** false once the token was revoked; the app is still known so rejections can be shown to its owner */
  active: boolean;
}

type Loader<Grant> = (hash: string) => Promise<Grant | null>;

interface Entry<Grant> {
  value: Grant | null;
  loadedAt: number;
}

export interface TokenCacheOptions {
  freshMs?: number;
  maxAgeMs?: number;
  maxEntries?: number;
  /** after a load failed, lookups that need the store fail at once for this long */
  failFastMs?: number;
  /** past its maximum age a cached grant is served again when the store has not answered within this long */
  staleWaitMs?: number;
  now?: () => number;
}

export function prismaTokenLoader(prisma: PrismaClient): Loader<TokenGrant> {
  return async (hash) => {
    const token = await prisma.token.findUnique({ where: { hash }, include: { app: true } });
    if (!token) return null;
    return {
      appId: token.appId,
      appName: token.app.appName,
      domains: token.app.domains,
      botId: token.app.botId === null ? null : String(token.app.botId),
      active: !token.revokedAt,
    };
  };
}

export class CredentialCache<Grant> {
  /** by the credential's hash; the oldest load is forgotten first */
  private readonly entries: RecentAnswers<Entry<Grant>>;
  private readonly loading = new Map<string, Promise<Grant | null>>();
  /** the hashes of the credentials looked up lately (made-up ones are screened out before a lookup) */
  private readonly hashes: RecentAnswers<string>;
  /** counts invalidations, so a load that raced one does not cache the answer it read before it */
  private invalidations = 0;
  private readonly freshMs: number;
  private readonly maxAgeMs: number;
  private readonly maxEntries: number;
  private readonly failFastMs: number;
  private readonly staleWaitMs: number;
  private readonly now: () => number;
  /** the last failed load, while lookups are refused without asking the store */
  private failure: { error: unknown; until: number } | undefined;

  constructor(
    private readonly load: Loader<Grant>,
    options: TokenCacheOptions = {},
  ) {
    this.freshMs = options.freshMs ?? 1_000;
    this.maxAgeMs = options.maxAgeMs ?? 4_000;
    this.maxEntries = options.maxEntries ?? 50_000;
    this.failFastMs = options.failFastMs ?? 1_000;
    this.staleWaitMs = options.staleWaitMs ?? 1_000;
    this.now = options.now ?? Date.now;
    this.entries = new RecentAnswers(this.maxEntries);
    this.hashes = new RecentAnswers(Math.min(this.maxEntries, 10_000));
  }

  /**
   * The grant for a token, or null when no such token was ever issued. Throws when the store fails and
   * nothing was cached for the token.
   */
  async lookup(token: string): Promise<Grant | null> {
    const hash = this.hashes.get(token) ?? this.hashes.remember(token, hashToken(token));
    const entry = this.entries.get(hash);
    const age = entry ? this.now() - entry.loadedAt : Infinity;
    if (entry && age < this.freshMs) return entry.value;
    const refreshed = this.refresh(hash);
    if (!entry) return refreshed;
    if (age < this.maxAgeMs) {
      refreshed.catch(() => undefined); // keep serving the cached grant meanwhile
      return entry.value;
    }
    // too old to serve while the store answers; while it fails or stalls, the last grant it gave stands
    let timer: NodeJS.Timeout | undefined;
    const stale = new Promise<Grant | null>(
      (resolve) => (timer = setTimeout(() => resolve(entry.value), this.staleWaitMs)),
    );
    return Promise.race([refreshed.catch(() => entry.value), stale]).finally(() => clearTimeout(timer));
  }

  /** Forget a token at once (this node changed it). */
  invalidate(hash: string): void {
    this.invalidations++;
    this.entries.forget(hash);
    this.loading.delete(hash);
  }

  /**
   * Loads a grant, one load per token at a time. While the store is down every request would otherwise
   * start a load of its own as soon as the last one failed: each a failed connection and an error of
   * kilobytes (Prisma's), thousands a second under load.
   */
  private refresh(hash: string): Promise<Grant | null> {
    if (this.failure && this.now() < this.failure.until) return Promise.reject(this.failure.error);
    let pending = this.loading.get(hash);
    if (!pending) {
      const invalidationsBefore = this.invalidations;
      const loaded: Promise<Grant | null> = this.load(hash)
        .then(
          (value) => {
            if (this.invalidations !== invalidationsBefore) return value;
            this.entries.remember(hash, { value, loadedAt: this.now() });
            return value;
          },
          (error: unknown) => {
            this.failure = { error, until: this.now() + this.failFastMs };
            throw error;
          },
        )
        .finally(() => {
          if (this.loading.get(hash) === loaded) this.loading.delete(hash);
        });
      pending = loaded;
      this.loading.set(hash, loaded);
    }
    return pending;
  }
}

/** app tokens' cache */
export class TokenCache extends CredentialCache<TokenGrant> {}

// One kind of credential checked as tokens are: its screen (loaded once) refuses made-up values without a lookup, a
// cache answers the rest (negative answers too), and a revocation is forgotten by both at once.
import type { PrismaClient } from '../db/store.ts';
import type { Secrets } from './secret.ts';
import { CredentialCache, type TokenCacheOptions } from './cache.ts';
import type { CredentialFormat } from './format.ts';
import { type CredentialModel, CredentialScreen } from './screen.ts';

/** what the cache holds of a credential that exists: whether it still works, and what it grants */
type Cached = { active: boolean };

export class ScreenedLookup<Grant extends Cached> {
  private readonly cache: CredentialCache<Grant>;
  private screen: Promise<CredentialScreen> | undefined;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly secrets: Secrets,
    private readonly model: CredentialModel,
    private readonly format: CredentialFormat,
    load: (hash: string) => Promise<Grant | null>,
    cacheOptions: TokenCacheOptions = {},
  ) {
    this.cache = new CredentialCache(load, cacheOptions);
  }

  /** the kind's screen, loaded once (services load it at start, so a request never waits for it) */
  ready(): Promise<CredentialScreen> {
    this.screen ??= CredentialScreen.load(this.prisma, this.secrets, this.model, this.format).catch(
      (error: unknown) => {
        this.screen = undefined;
        throw error;
      },
    );
    return this.screen;
  }

  /** false: certainly not issued here (no checksum of ours, not one issued before checksums); true: worth a lookup */
  async mayBeIssued(value: string): Promise<boolean> {
    return (await this.ready()).mayBeIssued(value);
  }

  /** the active credential's entry, or null for a made-up (no lookup), unknown or revoked one */
  async active(value: string): Promise<Grant | null> {
    if (!(await this.mayBeIssued(value))) return null;
    const entry = await this.cache.lookup(value);
    return entry?.active ? entry : null;
  }

  /** refused on this node from now on: revoked here or elsewhere (a member's removal) */
  async forget(hashes: readonly string[]): Promise<void> {
    const screen = await this.ready();
    for (const hash of hashes) {
      this.cache.invalidate(hash);
      screen.forget(hash);
    }
  }
}

// Tells, without asking the store, whether a credential (app token, server key, read key, share link secret) can
// have been issued by this service: made-up ones (a flood of random ones included) are refused at the cost of one
// HMAC, before any lookup.
import type { PrismaClient } from '../db/store.ts';
import type { Secrets } from './secret.ts';
import { RecentAnswers } from './recent-answers.ts';
import { type CredentialFormat, hashToken, hasValidChecksum, TOKEN_CHECKSUM_PURPOSE } from './format.ts';

/** the tables of credentials that may have been issued without a checksum */
export type CredentialModel = 'token' | 'readKey' | 'serverKey' | 'shareLink';
type HashTable = {
  findMany(args: { where: { checksummed: false }; select: { hash: true } }): Promise<{ hash: string }[]>;
};

/** credentials in use whose checksum is remembered as valid: an app's token, or a server's key, each of them */
const CONFIRMED_KEPT = 10_000;

export class CredentialScreen {
  /** only valid ones are kept: a flood of made-up credentials adds nothing and evicts nothing */
  private readonly confirmed = new RecentAnswers<true>(CONFIRMED_KEPT);

  constructor(
    private readonly format: CredentialFormat,
    private readonly checksumKey: Buffer,
    /**
     * sha-256 of every credential of the kind issued without a checksum. No node issues such credentials any more,
     * so the set read at start stays complete; a revocation on another node still leaves it here, and the lookup
     * (cached, negative answers too) refuses it.
     */
    private readonly unchecksummedHashes: Set<string>,
  ) {}

  /** the screen of one kind: its format, and the hashes of its credentials issued without a checksum */
  static async load(
    prisma: PrismaClient,
    secrets: Secrets,
    model: CredentialModel,
    format: CredentialFormat,
  ): Promise<CredentialScreen> {
    const table = prisma[model] as unknown as HashTable;
    const rows = await table.findMany({ where: { checksummed: false }, select: { hash: true } });
    return new CredentialScreen(format, secrets.key(TOKEN_CHECKSUM_PURPOSE), new Set(rows.map((row) => row.hash)));
  }

  /** false: certainly not a credential of ours; true: worth a lookup (cached) */
  mayBeIssued(value: string): boolean {
    if (!this.format.pattern.test(value)) return false;
    if (this.confirmed.get(value)) return true;
    if (hasValidChecksum(value, this.checksumKey, this.format)) return this.confirmed.remember(value, true);
    return this.unchecksummedHashes.size > 0 && this.unchecksummedHashes.has(hashToken(value));
  }

  /** a credential issued without a checksum was revoked here: refused from now on without a lookup */
  forget(hash: string): void {
    this.unchecksummedHashes.delete(hash);
  }
}

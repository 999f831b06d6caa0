// Tells, without asking the store, whether a token can have been issued by this service: made-up tokens
// (a flood of random ones included) are refused at the cost of one HMAC, before any lookup.
import type { PrismaClient } from '../db/store.ts';
import type { Secrets } from '../secret.ts';
import { hashToken, hasTokenShape, hasValidChecksum, TOKEN_CHECKSUM_PURPOSE } from './format.ts';

export class TokenScreen {
  constructor(
    private readonly checksumKey: Buffer,
    /**
     * sha-256 of every token issued without a checksum. No node issues such tokens any more, so the set
     * read at start stays complete; revoked ones stay in it so their refusals still reach the app's owner.
     */
    private readonly unchecksummedHashes: ReadonlySet<string>,
  ) {}

  static async load(prisma: PrismaClient, secrets: Secrets): Promise<TokenScreen> {
    const rows = await prisma.token.findMany({ where: { checksummed: false }, select: { hash: true } });
    return new TokenScreen(secrets.key(TOKEN_CHECKSUM_PURPOSE), new Set(rows.map((row) => row.hash)));
  }

  /** false: certainly not a token of ours; true: worth a lookup (cached) */
  mayBeIssued(token: string): boolean {
    if (!hasTokenShape(token)) return false;
    if (hasValidChecksum(token, this.checksumKey)) return true;
    return this.unchecksummedHashes.size > 0 && this.unchecksummedHashes.has(hashToken(token));
  }
}

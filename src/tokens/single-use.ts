// Sign-in proofs that work once: the hash of each used proof (login link nonce, widget or initData
// signature) is remembered until the proof expires, so a replayed one is refused on every node.
import crypto from 'node:crypto';
import type { PrismaClient } from '../db/store.ts';

export type ProofKind = 'link' | 'widget' | 'webapp';

export class SingleUseProofs {
  constructor(private readonly prisma: PrismaClient) {}

  /** true for the first use of this proof, false for every later one (also when two arrive at once) */
  async claim(kind: ProofKind, proof: string, expiresAt: Date): Promise<boolean> {
    await this.prisma.loginLinkUse.deleteMany({ where: { expiresAt: { lt: new Date() } } });
    const { count } = await this.prisma.loginLinkUse.createMany({
      data: [{ nonce: SingleUseProofs.key(kind, proof), expiresAt }],
      skipDuplicates: true,
    });
    return count === 1;
  }

  /** a link's nonce is random and kept as it is; signatures are kept as hashes, marked with their kind */
  private static key(kind: ProofKind, proof: string): string {
    return kind === 'link' ? proof : `${kind}:${crypto.createHash('sha256').update(proof).digest('base64url')}`;
  }
}

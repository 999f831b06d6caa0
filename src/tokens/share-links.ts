// The public read-only link of one app's dashboard: made and revoked by whoever may manage the app, opened by anyone
// who has it, without signing in. Only the link secret's sha-256 is stored; an app has one active link at a time.
// Secrets carry a keyed checksum, so made-up ones are refused without a lookup (screen.ts).
import type { PrismaClient } from '../db/store.ts';
import { generateCredential, hashToken, TOKEN_CHECKSUM_PURPOSE, urlSafeFormat } from './format.ts';
import { type Maker, type Makers, makerKeyOf } from './makers.ts';
import type { Actor, AppRecord, TokenRegistry } from './registry.ts';
import type { CredentialScreen } from './screen.ts';
import { ScreenedLookup } from './screened-lookup.ts';

export const SHARE_LINK_PREFIX = 'tma_share_';
/** the prefix, 26 random characters of nanoid's URL alphabet (156 bits) and a 6-character checksum */
const SHARE_LINK_FORMAT = urlSafeFormat(SHARE_LINK_PREFIX);
const SHOWN_RANDOM = 6;

/** the app a link opens */
export interface SharedApp {
  appId: number;
  appName: string;
}

export interface ShareLinkInfo {
  /** the secret's first characters, to recognise the link */
  prefix: string;
  createdAt: Date;
  /** who made it; removing the member revokes it */
  madeBy: Maker;
}

/** where a share link's page lives under the service's address */
export const sharePath = (secret: string) => `/share/${secret}`;

export class ShareLinks {
  /**
   * made-up secrets refused without a lookup; known and unknown ones cached alike (a revoke made on another node takes
   * effect here within 5 s)
   */
  private readonly links: ScreenedLookup<SharedApp & { active: boolean }>;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly registry: TokenRegistry,
    private readonly makers: Makers,
  ) {
    this.links = new ScreenedLookup(prisma, registry.secrets, 'shareLink', SHARE_LINK_FORMAT, async (hash) => {
      const row = await this.prisma.shareLink.findUnique({ where: { hash }, include: { app: true } });
      return row && { appId: row.appId, appName: row.app.appName, active: row.revokedAt === null };
    });
  }

  /** the screen of link secrets, loaded once (services load it at start, so a request never waits for it) */
  ready(): Promise<CredentialScreen> {
    return this.links.ready();
  }

  /** a secret this service may have issued (checksum, or one of the links made before checksums): worth a lookup */
  mayExist(secret: string): Promise<boolean> {
    return this.links.mayBeIssued(secret);
  }

  /** the app's active link (without its secret), or null */
  async current(appName: string, actor: Actor): Promise<ShareLinkInfo | null> {
    const app = await this.registry.authorize({ appName }, actor, 'share');
    const row = await this.prisma.shareLink.findFirst({
      where: { appId: app.appId, revokedAt: null },
      orderBy: { id: 'desc' },
    });
    if (!row) return null;
    const describe = await this.makers.describer(app);
    return { prefix: row.prefix, createdAt: row.createdAt, madeBy: describe(row.createdBy) };
  }

  /** a new link; the one before stops working. The secret is returned once and never again. */
  async create(appName: string, actor: Actor): Promise<{ secret: string; app: AppRecord; info: ShareLinkInfo }> {
    const app = await this.registry.authorize({ appName }, actor, 'share');
    const secret = generateCredential(SHARE_LINK_FORMAT, this.registry.secrets.key(TOKEN_CHECKSUM_PURPOSE));
    const replaced = await this.activeHashes(app.appId);
    const prefix = secret.slice(0, SHARE_LINK_PREFIX.length + SHOWN_RANDOM);
    const [, created] = await this.prisma.$transaction([
      this.prisma.shareLink.updateMany({
        where: { appId: app.appId, revokedAt: null },
        data: { revokedAt: new Date() },
      }),
      this.prisma.shareLink.create({
        data: {
          appId: app.appId,
          hash: hashToken(secret),
          prefix,
          checksummed: true,
          createdBy: makerKeyOf(this.registry, actor),
        },
      }),
      this.prisma.auditLog.create({ data: this.registry.auditRecord(app, actor, 'share_link.create', { prefix }) }),
    ]);
    await this.forget(replaced);
    const describe = await this.makers.describer(app);
    return { secret, app, info: { prefix, createdAt: created.createdAt, madeBy: describe(created.createdBy) } };
  }

  /** revokes the app's active link; false when it had none */
  async revoke(appName: string, actor: Actor): Promise<boolean> {
    const app = await this.registry.authorize({ appName }, actor, 'share');
    const revoked = await this.activeHashes(app.appId);
    const { count } = await this.prisma.shareLink.updateMany({
      where: { appId: app.appId, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (count > 0)
      await this.prisma.auditLog.create({ data: this.registry.auditRecord(app, actor, 'share_link.revoke') });
    await this.forget(revoked);
    return count > 0;
  }

  /**
   * The app an active link opens, or null: anything not shaped like a link or without this service's checksum is
   * refused without a lookup; unknown and revoked links are remembered for a second, like live ones.
   */
  async resolve(secret: string): Promise<SharedApp | null> {
    const shared = await this.links.active(secret);
    return shared && { appId: shared.appId, appName: shared.appName };
  }

  private async activeHashes(appId: number): Promise<string[]> {
    const rows = await this.prisma.shareLink.findMany({ where: { appId, revokedAt: null }, select: { hash: true } });
    return rows.map((row) => row.hash);
  }

  /** links revoked (here, or with a removed member): refused here at once, without a lookup for those made before checksums */
  forget(hashes: readonly string[]): Promise<void> {
    return this.links.forget(hashes);
  }
}

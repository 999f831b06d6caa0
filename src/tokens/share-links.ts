// The public read-only link of one app's dashboard: made and revoked by whoever may manage the app, opened by anyone
// who has it, without signing in. Only the link secret's sha-256 is stored; an app has one active link at a time.
import { nanoid } from 'nanoid';
import type { PrismaClient } from '../db/store.ts';
import { hashToken } from './format.ts';
import { type Maker, type Makers, makerKeyOf } from './makers.ts';
import type { Actor, AppRecord, TokenRegistry } from './registry.ts';

export const SHARE_LINK_PREFIX = 'tma_share_';
/** nanoid's URL alphabet: 192 random bits */
const RANDOM_LENGTH = 32;
const SHOWN_RANDOM = 6;
const SHAPE = new RegExp(`^${SHARE_LINK_PREFIX}[A-Za-z0-9_-]{${RANDOM_LENGTH}}$`);

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
  constructor(
    private readonly prisma: PrismaClient,
    private readonly registry: TokenRegistry,
    private readonly makers: Makers,
  ) {}

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
    const secret = SHARE_LINK_PREFIX + nanoid(RANDOM_LENGTH);
    const prefix = secret.slice(0, SHARE_LINK_PREFIX.length + SHOWN_RANDOM);
    const [, created] = await this.prisma.$transaction([
      this.prisma.shareLink.updateMany({
        where: { appId: app.appId, revokedAt: null },
        data: { revokedAt: new Date() },
      }),
      this.prisma.shareLink.create({
        data: { appId: app.appId, hash: hashToken(secret), prefix, createdBy: makerKeyOf(this.registry, actor) },
      }),
      this.prisma.auditLog.create({ data: this.registry.auditRecord(app, actor, 'share_link.create', { prefix }) }),
    ]);
    const describe = await this.makers.describer(app);
    return { secret, app, info: { prefix, createdAt: created.createdAt, madeBy: describe(created.createdBy) } };
  }

  /** revokes the app's active link; false when it had none */
  async revoke(appName: string, actor: Actor): Promise<boolean> {
    const app = await this.registry.authorize({ appName }, actor, 'share');
    const { count } = await this.prisma.shareLink.updateMany({
      where: { appId: app.appId, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    if (count > 0)
      await this.prisma.auditLog.create({ data: this.registry.auditRecord(app, actor, 'share_link.revoke') });
    return count > 0;
  }

  /** the app an active link opens, or null: anything not shaped like a link is refused without a lookup */
  async resolve(secret: string): Promise<{ appId: number; appName: string } | null> {
    if (!SHAPE.test(secret)) return null;
    const row = await this.prisma.shareLink.findUnique({ where: { hash: hashToken(secret) }, include: { app: true } });
    if (!row || row.revokedAt !== null) return null;
    return { appId: row.appId, appName: row.app.appName };
  }
}

// How many apps one person may own: MAX_APPS_PER_OWNER, or what an administrator set for them (owner_limits). A
// bounded number keeps one person from filling the catalog with apps of made-up names.
import type { PrismaClient } from '../db/store.ts';
import { RegistryError } from './registry-error.ts';

/** MAX_APPS_PER_OWNER's default */
export const DEFAULT_MAX_APPS_PER_OWNER = 20;

export interface AppLimit {
  /** apps the person owns now */
  owned: number;
  limit: number;
  /** an administrator set the limit (else the service's default) */
  raised: boolean;
}

export class OwnerLimits {
  constructor(
    private readonly prisma: PrismaClient,
    /** the keyed hash apps.owner_key holds for a Telegram id */
    private readonly ownerKey: (telegramId: string) => string,
    private readonly defaultLimit = DEFAULT_MAX_APPS_PER_OWNER,
  ) {}

  async of(telegramId: string): Promise<AppLimit> {
    return this.ofKey(this.ownerKey(telegramId));
  }

  /** refuses a new app to an owner who holds as many as they may */
  async check(ownerKey: string): Promise<void> {
    const { owned, limit } = await this.ofKey(ownerKey);
    if (owned >= limit)
      throw new RegistryError(
        'app_limit',
        `You own ${owned} apps, as many as one person may hold here (${limit}). Delete one you no longer use, or ` +
          'ask an administrator to raise your limit.',
      );
  }

  /** an administrator sets how many apps a person may own (null: back to the default); returns the limit in force */
  async set(
    telegramId: string,
    maxApps: number | null,
    actor: { surface: string; isAdmin?: boolean },
  ): Promise<AppLimit> {
    if (!actor.isAdmin) throw new RegistryError('not_allowed', 'Only an administrator may change app limits.');
    const ownerKey = this.ownerKey(telegramId);
    await this.prisma.$transaction([
      maxApps === null
        ? this.prisma.ownerLimit.deleteMany({ where: { ownerKey } })
        : this.prisma.ownerLimit.upsert({ where: { ownerKey }, create: { ownerKey, maxApps }, update: { maxApps } }),
      this.prisma.auditLog.create({
        data: { surface: actor.surface, action: 'owner.app_limit', detail: { owner: ownerKey, max_apps: maxApps } },
      }),
    ]);
    return this.ofKey(ownerKey);
  }

  private async ofKey(ownerKey: string): Promise<AppLimit> {
    const [owned, row] = await Promise.all([
      this.prisma.app.count({ where: { ownerKey } }),
      this.prisma.ownerLimit.findUnique({ where: { ownerKey } }),
    ]);
    return { owned, limit: row?.maxApps ?? this.defaultLimit, raised: row !== null };
  }
}

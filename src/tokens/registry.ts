// Issues, lists, revokes and regenerates app tokens (control plane, Prisma), writing the audit log.
import type { PrismaClient } from '../db/store.ts';
import type { Secrets } from '../secret.ts';
import { displayPrefix, generateToken, hashToken } from './format.ts';

/** who acts, from which surface; telegramId is hashed before it is stored */
export interface Actor {
  surface: 'cli' | 'bot' | 'site';
  telegramId?: string;
}

export interface AppRecord {
  appId: number;
  appName: string;
  bot: string;
  domains: string[];
  ownerKey: string | null;
  createdAt: Date;
  /** display prefix of the active token, null when revoked */
  tokenPrefix: string | null;
  tokenCreatedAt: Date | null;
}

export class RegistryError extends Error {
  constructor(
    readonly code: 'app_exists' | 'app_not_found',
    message: string,
  ) {
    super(message);
  }
}

export interface NewApp {
  appName: string;
  bot: string;
  domains: string[];
  ownerTelegramId?: string;
}

export class TokenRegistry {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly secrets: Secrets,
    /** told the hash of every token whose grant changed, so caches drop it at once */
    private readonly onTokenChanged: (hash: string) => void = () => {},
  ) {}

  ownerKey(telegramId: string): string {
    return this.secrets.hmac('owner', telegramId).toString('base64url').slice(0, 22);
  }

  async createApp(input: NewApp, actor: Actor): Promise<{ token: string; app: AppRecord }> {
    const token = generateToken();
    const existing = await this.prisma.app.findUnique({ where: { appName: input.appName }, select: { id: true } });
    if (existing) throw new RegistryError('app_exists', `The app name "${input.appName}" is already taken.`);
    try {
      await this.prisma.app.create({
        data: {
          appName: input.appName,
          bot: input.bot,
          domains: input.domains,
          ownerKey: input.ownerTelegramId === undefined ? null : this.ownerKey(input.ownerTelegramId),
          tokens: { create: { hash: hashToken(token), prefix: displayPrefix(token) } },
          audit: { create: this.auditEntry(actor, 'app.create', input.appName, { domains: input.domains }) },
        },
      });
    } catch (error) {
      if ((error as { code?: string }).code === 'P2002') {
        throw new RegistryError('app_exists', `The app name "${input.appName}" is already taken.`);
      }
      throw error;
    }
    return { token, app: await this.getApp(input.appName) };
  }

  async getApp(appName: string): Promise<AppRecord> {
    const app = await this.prisma.app.findUnique({
      where: { appName },
      include: { tokens: { where: { revokedAt: null }, orderBy: { id: 'desc' }, take: 1 } },
    });
    if (!app) throw new RegistryError('app_not_found', `There is no app named "${appName}".`);
    return toRecord(app);
  }

  async listApps(filter: { ownerTelegramId?: string } = {}): Promise<AppRecord[]> {
    const apps = await this.prisma.app.findMany({
      where: filter.ownerTelegramId === undefined ? {} : { ownerKey: this.ownerKey(filter.ownerTelegramId) },
      include: { tokens: { where: { revokedAt: null }, orderBy: { id: 'desc' }, take: 1 } },
      orderBy: { appName: 'asc' },
    });
    return apps.map(toRecord);
  }

  /** Revokes the app's active token(s); ingestion with them answers "Token is invalid." */
  async revoke(appName: string, actor: Actor): Promise<AppRecord> {
    const app = await this.requireApp(appName);
    const active = await this.prisma.token.findMany({ where: { appId: app.id, revokedAt: null } });
    await this.prisma.$transaction([
      this.prisma.token.updateMany({ where: { appId: app.id, revokedAt: null }, data: { revokedAt: new Date() } }),
      this.prisma.auditLog.create({ data: { ...this.auditEntry(actor, 'token.revoke', appName), appId: app.id } }),
    ]);
    active.forEach((token) => this.onTokenChanged(token.hash));
    return this.getApp(appName);
  }

  /** Revokes the active token and issues a new one; returns the new secret (shown once). */
  async regenerate(appName: string, actor: Actor): Promise<{ token: string; app: AppRecord }> {
    const app = await this.requireApp(appName);
    const active = await this.prisma.token.findMany({ where: { appId: app.id, revokedAt: null } });
    const token = generateToken();
    await this.prisma.$transaction([
      this.prisma.token.updateMany({ where: { appId: app.id, revokedAt: null }, data: { revokedAt: new Date() } }),
      this.prisma.token.create({ data: { appId: app.id, hash: hashToken(token), prefix: displayPrefix(token) } }),
      this.prisma.auditLog.create({ data: { ...this.auditEntry(actor, 'token.regenerate', appName), appId: app.id } }),
    ]);
    active.forEach((old) => this.onTokenChanged(old.hash));
    return { token, app: await this.getApp(appName) };
  }

  private async requireApp(appName: string) {
    const app = await this.prisma.app.findUnique({ where: { appName } });
    if (!app) throw new RegistryError('app_not_found', `There is no app named "${appName}".`);
    return app;
  }

  private auditEntry(actor: Actor, action: string, appName: string, detail?: object) {
    return {
      surface: actor.surface,
      actorKey: actor.telegramId === undefined ? null : this.ownerKey(actor.telegramId),
      action,
      appName,
      ...(detail ? { detail } : {}),
    };
  }
}

function toRecord(app: {
  id: number;
  appName: string;
  bot: string;
  domains: string[];
  ownerKey: string | null;
  createdAt: Date;
  tokens: { prefix: string; createdAt: Date }[];
}): AppRecord {
  const token = app.tokens[0];
  return {
    appId: app.id,
    appName: app.appName,
    bot: app.bot,
    domains: app.domains,
    ownerKey: app.ownerKey,
    createdAt: app.createdAt,
    tokenPrefix: token?.prefix ?? null,
    tokenCreatedAt: token?.createdAt ?? null,
  };
}

// Issues, lists, edits, revokes and regenerates app tokens (control plane, Prisma), decides who may do what on
// which app (authorize: its owner, its members by role (policy.ts), administrators, the operator CLI), and writes
// every change to the audit log.
import { isUniqueViolation } from '../db/errors.ts';
import type { PrismaClient } from '../db/store.ts';
import type { Secrets } from './secret.ts';
import { changeQuotas, type QuotaOverrides } from './app-quotas.ts';
import { type AppRecord, type AppRow, type AuthorizedApp, toRecord, WITH_ACTIVE_TOKEN } from './app-record.ts';
import { displayPrefix, generateToken, hashToken, TOKEN_CHECKSUM_PURPOSE } from './format.ts';
import { allows, refusal, type AppRole, type MemberRole, type Permission } from './policy.ts';
import { RegistryError } from './registry-error.ts';
import { OwnerLimits } from './owner-limits.ts';

export type { AppRecord } from './app-record.ts';
export { RegistryError, type RegistryErrorCode } from './registry-error.ts';

/** who acts, from which surface; telegramId is hashed before it is stored */
export interface Actor {
  surface: 'cli' | 'bot' | 'site';
  telegramId?: string;
  /** administrators (and the operator CLI) may see and change every app */
  isAdmin?: boolean;
}

/** the operator at the command line */
export const OPERATOR: Actor = { surface: 'cli', isAdmin: true };

/** names one app: by its name (site, CLI) or its id (bot buttons) */
export type AppRef = { appName: string } | { appId: number };

export type { QuotaOverrides } from './app-quotas.ts';

export interface NewApp {
  appName: string;
  bot: string;
  /** the bot's numeric id (decimal digits): Telegram signs the app's launches for it; absent: given later */
  botId?: string | null;
  domains: string[];
  ownerTelegramId?: string;
  /** the owner's Telegram first name, when the surface knows it: lists name what they made by it */
  ownerName?: string;
  /** the owner's choice: the app is in the public catalog (default: listed) */
  catalogListed?: boolean;
}

export interface RegistryOptions {
  /** apps one person may own unless an administrator raised their limit (MAX_APPS_PER_OWNER) */
  maxAppsPerOwner?: number;
}

export interface AppFilter {
  ownerTelegramId?: string;
  appName?: string;
}

/** characters kept of an owner's name, as of a member's (members.ts) */
const MAX_OWNER_NAME = 64;

/** what is stored of a new token: its hash and display prefix, never the token itself */
const tokenRow = (token: string) => ({ hash: hashToken(token), prefix: displayPrefix(token), checksummed: true });

const notFound = (name: string | number) =>
  new RegistryError(
    'app_not_found',
    typeof name === 'number' ? 'There is no such app.' : `There is no app named "${name}".`,
  );

export class TokenRegistry {
  /** how many apps one person may own */
  readonly limits: OwnerLimits;

  constructor(
    private readonly prisma: PrismaClient,
    /** the service's keys: credentials' checksums, owners' keyed hashes */
    readonly secrets: Secrets,
    /** told the hash of every token whose grant changed, so caches drop it at once */
    private readonly onTokenChanged: (hash: string) => void = () => {},
    /** told when an app row is gone, so its events and rollups are purged (src/events/lifecycle/deleted-app-purge.ts) */
    private readonly onAppDeleted: () => void = () => {},
    options: RegistryOptions = {},
  ) {
    this.limits = new OwnerLimits(prisma, (telegramId) => this.ownerKey(telegramId), options.maxAppsPerOwner);
  }

  private newToken(): string {
    return generateToken(this.secrets.key(TOKEN_CHECKSUM_PURPOSE));
  }

  ownerKey(telegramId: string): string {
    return this.secrets.shortHash('owner', telegramId);
  }

  async createApp(input: NewApp, actor: Actor): Promise<{ token: string; app: AppRecord }> {
    const token = this.newToken();
    const taken = new RegistryError('app_exists', `The app name "${input.appName}" is already taken.`);
    if (await this.prisma.app.findUnique({ where: { appName: input.appName }, select: { id: true } })) throw taken;
    const ownerKey = input.ownerTelegramId === undefined ? null : this.ownerKey(input.ownerTelegramId);
    if (ownerKey !== null && !actor.isAdmin) await this.limits.check(ownerKey);
    let created: AppRow;
    try {
      created = await this.prisma.app.create({
        include: WITH_ACTIVE_TOKEN,
        data: {
          appName: input.appName,
          bot: input.bot,
          botId: input.botId ? BigInt(input.botId) : null,
          domains: input.domains,
          catalogListed: input.catalogListed ?? true,
          ownerKey,
          ownerName: ownerKey === null ? null : input.ownerName?.trim().slice(0, MAX_OWNER_NAME) || null,
          tokens: { create: tokenRow(token) },
          audit: {
            create: this.auditEntry(actor, 'app.create', input.appName, {
              domains: input.domains,
              bot_id: input.botId ?? null,
              catalog_listed: input.catalogListed ?? true,
            }),
          },
        },
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw taken;
      throw error;
    }
    return { token, app: toRecord({ ...created, role: this.roleOf(created, actor, undefined) ?? 'owner' }) };
  }

  /**
   * The one authorisation decision of every surface: the app if the actor's role allows the action on it. People
   * with no part in the app get "not found", so other people's apps stay invisible; a member whose role is too
   * small gets "forbidden" with a sentence saying who may.
   */
  async authorize(ref: AppRef, actor: Actor, permission: Permission): Promise<AppRecord> {
    return toRecord(await this.authorized(ref, actor, permission));
  }

  /** The app if the actor may see it (authorize with 'view'). */
  async getApp(appName: string, actor: Actor): Promise<AppRecord> {
    return this.authorize({ appName }, actor, 'view');
  }

  async getAppById(appId: number, actor: Actor): Promise<AppRecord> {
    return this.authorize({ appId }, actor, 'view');
  }

  /**
   * The apps the actor owns or is a member of, each with their role; administrators may filter by owner or name
   * across all apps.
   */
  async listApps(actor: Actor, filter: AppFilter = {}): Promise<AppRecord[]> {
    const ownerTelegramId = actor.isAdmin ? filter.ownerTelegramId : actor.telegramId;
    if (!actor.isAdmin && ownerTelegramId === undefined) return [];
    const key = ownerTelegramId === undefined ? undefined : this.ownerKey(ownerTelegramId);
    const viewerKey = actor.telegramId === undefined ? undefined : this.ownerKey(actor.telegramId);
    const apps = await this.prisma.app.findMany({
      where: {
        ...(key === undefined
          ? {}
          : actor.isAdmin
            ? { ownerKey: key }
            : { OR: [{ ownerKey: key }, { members: { some: { memberKey: key } } }] }),
        ...(filter.appName === undefined ? {} : { appName: filter.appName }),
      },
      include: {
        ...WITH_ACTIVE_TOKEN,
        members: { where: { memberKey: viewerKey ?? '' }, select: { role: true } },
      },
      orderBy: { appName: 'asc' },
    });
    return apps.map((app) =>
      toRecord({ ...app, role: this.roleOf(app, actor, app.members[0]?.role as MemberRole | undefined) ?? 'viewer' }),
    );
  }

  /** Revokes the app's active token; ingestion with it answers "Token is invalid." */
  async revoke(appName: string, actor: Actor): Promise<AppRecord> {
    const app = await this.authorized({ appName }, actor, 'manage-tokens');
    await this.changeTokens(app, actor, 'token.revoke', []);
    return this.getApp(appName, actor);
  }

  /** Revokes the active token and issues a new one; returns the new secret (shown once). */
  async regenerate(appName: string, actor: Actor): Promise<{ token: string; app: AppRecord }> {
    const app = await this.authorized({ appName }, actor, 'manage-tokens');
    const token = this.newToken();
    await this.changeTokens(app, actor, 'token.regenerate', [
      this.prisma.token.create({ data: { appId: app.id, ...tokenRow(token) } }),
    ]);
    return { token, app: await this.getApp(appName, actor) };
  }

  async addDomain(appName: string, domain: string, actor: Actor): Promise<AppRecord> {
    const app = await this.authorized({ appName }, actor, 'manage-domains');
    if (app.domains.includes(domain))
      throw new RegistryError('domain_exists', `${domain} is already a domain of ${appName}.`);
    return this.setDomains(app, [...app.domains, domain], actor, 'app.domain.add', domain);
  }

  async removeDomain(appName: string, domain: string, actor: Actor): Promise<AppRecord> {
    const app = await this.authorized({ appName }, actor, 'manage-domains');
    if (!app.domains.includes(domain))
      throw new RegistryError('domain_not_found', `${domain} is not a domain of ${appName}.`);
    if (app.domains.length === 1) {
      throw new RegistryError(
        'last_domain',
        `${domain} is the only domain of ${appName}: add the new one before removing it.`,
      );
    }
    return this.setDomains(
      app,
      app.domains.filter((entry) => entry !== domain),
      actor,
      'app.domain.remove',
      domain,
    );
  }

  /**
   * Sets or changes the id of the app's bot (null: forgets it), which Telegram signs the app's launches for. Launches
   * checked from then on use it; those stored before keep their verdict.
   */
  /** The owner's choice of whether the app is in the public catalog (as public as a shared link: who may share may). */
  async setCatalogListed(appName: string, listed: boolean, actor: Actor): Promise<AppRecord> {
    const app = await this.authorized({ appName }, actor, 'share');
    await this.prisma.$transaction([
      this.prisma.app.update({ where: { id: app.id }, data: { catalogListed: listed } }),
      this.prisma.auditLog.create({
        data: { ...this.auditEntry(actor, 'app.catalog', app.appName, { listed }), appId: app.id },
      }),
    ]);
    return this.getApp(app.appName, actor);
  }

  async setBotId(appName: string, botId: string | null, actor: Actor): Promise<AppRecord> {
    const app = await this.authorized({ appName }, actor, 'manage-domains');
    await this.prisma.$transaction([
      this.prisma.app.update({ where: { id: app.id }, data: { botId: botId === null ? null : BigInt(botId) } }),
      this.prisma.auditLog.create({
        data: {
          ...this.auditEntry(actor, 'app.bot_id', app.appName, { bot_id: botId, admin: app.role === 'administrator' }),
          appId: app.id,
        },
      }),
    ]);
    await this.tokensChanged(app.id);
    return this.getApp(app.appName, actor);
  }

  /**
   * The id the app's own bot reported with a server key (the grammY middleware's ctx.me.id): kept when the app has
   * none yet, never replacing one its owner gave. True when it was kept.
   */
  async reportBotId(appId: number, botId: string): Promise<boolean> {
    const kept = await this.prisma.app.updateMany({
      where: { id: appId, botId: null },
      data: { botId: BigInt(botId) },
    });
    if (kept.count === 0) return false;
    const detail = { bot_id: botId, reported_by: 'server key' };
    await this.prisma.auditLog.create({ data: { surface: 'server-key', action: 'app.bot_id', appId, detail } });
    await this.tokensChanged(appId);
    return true;
  }

  /** the app's active tokens' grants changed: caches drop them at once */
  private async tokensChanged(appId: number): Promise<void> {
    const tokens = await this.prisma.token.findMany({ where: { appId, revokedAt: null }, select: { hash: true } });
    tokens.forEach((token) => this.onTokenChanged(token.hash));
  }

  /**
   * The app's own daily quotas (null: the service's default), after applying the change (a field left out
   * stays as it is). Administrators only: the quotas protect the operator from the app's public token.
   */
  async setQuotas(appName: string, change: Partial<QuotaOverrides>, actor: Actor): Promise<QuotaOverrides> {
    if (!actor.isAdmin) throw new RegistryError('not_allowed', 'Only an administrator may change quotas.');
    const app = await this.authorize({ appName }, actor, 'view');
    const detail = { events_per_day: change.eventsPerDay, bytes_per_day: change.bytesPerDay };
    return changeQuotas(this.prisma, app.appId, change, this.auditRecord(app, actor, 'app.quota', detail));
  }

  /**
   * Deletes the app with its tokens at once; its events and rollups are purged right after, in the
   * background (one statement for millions of rows would outlast the statement timeout). The audit log
   * keeps the record of it.
   */
  async deleteApp(appName: string, actor: Actor): Promise<void> {
    const app = await this.authorized({ appName }, actor, 'delete');
    const tokens = await this.prisma.token.findMany({ where: { appId: app.id }, select: { hash: true } });
    await this.prisma.$transaction([
      this.prisma.auditLog.create({
        data: this.auditEntry(actor, 'app.delete', appName, { admin: app.role === 'administrator' }),
      }),
      // the app row's lock waits for event commits in flight; commits after it store nothing for the app
      this.prisma.app.delete({ where: { id: app.id } }),
    ]);
    tokens.forEach((token) => this.onTokenChanged(token.hash));
    this.onAppDeleted();
  }

  /** the audit row of a change the actor makes to the app, for control-plane modules that write their own */
  auditRecord(app: AppRecord, actor: Actor, action: string, detail: object = {}) {
    return {
      ...this.auditEntry(actor, action, app.appName, { ...detail, admin: app.role === 'administrator' }),
      appId: app.appId,
    };
  }

  private async setDomains(
    app: AuthorizedApp,
    domains: string[],
    actor: Actor,
    action: string,
    domain: string,
  ): Promise<AppRecord> {
    await this.prisma.$transaction([
      this.prisma.app.update({ where: { id: app.id }, data: { domains } }),
      this.prisma.auditLog.create({
        data: {
          ...this.auditEntry(actor, action, app.appName, { domain, admin: app.role === 'administrator' }),
          appId: app.id,
        },
      }),
    ]);
    const tokens = await this.prisma.token.findMany({
      where: { appId: app.id, revokedAt: null },
      select: { hash: true },
    });
    tokens.forEach((token) => this.onTokenChanged(token.hash));
    return this.getApp(app.appName, actor);
  }

  /** revokes every active token of the app, runs the extra writes, audits, all in one transaction */
  private async changeTokens(
    app: AuthorizedApp,
    actor: Actor,
    action: string,
    extra: ReturnType<PrismaClient['token']['create']>[],
  ) {
    const active = await this.prisma.token.findMany({
      where: { appId: app.id, revokedAt: null },
      select: { hash: true },
    });
    await this.prisma.$transaction([
      this.prisma.token.updateMany({ where: { appId: app.id, revokedAt: null }, data: { revokedAt: new Date() } }),
      ...extra,
      this.prisma.auditLog.create({
        data: {
          ...this.auditEntry(actor, action, app.appName, { admin: app.role === 'administrator' }),
          appId: app.id,
        },
      }),
    ]);
    active.forEach((token) => this.onTokenChanged(token.hash));
  }

  private async authorized(ref: AppRef, actor: Actor, permission: Permission): Promise<AuthorizedApp> {
    const name = 'appName' in ref ? ref.appName : ref.appId;
    const key = actor.telegramId === undefined ? undefined : this.ownerKey(actor.telegramId);
    const app = await this.prisma.app.findUnique({
      where: 'appName' in ref ? { appName: ref.appName } : { id: ref.appId },
      include: {
        ...WITH_ACTIVE_TOKEN,
        members: { where: { memberKey: key ?? '' }, select: { role: true } },
      },
    });
    const role = app && this.roleOf(app, actor, app.members[0]?.role as MemberRole | undefined);
    if (!app || !role) throw notFound(name);
    if (!allows(role, permission)) throw new RegistryError('forbidden', refusal(permission));
    return { ...app, role };
  }

  /**
   * What the actor is to the app, null for nobody: its owner, else an administrator (marked in the audit log when
   * they act), else the member role they hold.
   */
  private roleOf(app: { ownerKey: string | null }, actor: Actor, memberRole: MemberRole | undefined): AppRole | null {
    if (actor.telegramId !== undefined && app.ownerKey === this.ownerKey(actor.telegramId)) return 'owner';
    if (actor.isAdmin) return 'administrator';
    return memberRole ?? null;
  }

  private auditEntry(actor: Actor, action: string, appName: string | null, detail?: object) {
    return {
      surface: actor.surface,
      actorKey: actor.telegramId === undefined ? null : this.ownerKey(actor.telegramId),
      action,
      appName,
      ...(detail ? { detail } : {}),
    };
  }
}

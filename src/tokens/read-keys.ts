// Per-app keys (read keys of the read API; server keys of POST /events use the same class, see server-keys.ts):
// issued once with a keyed checksum, stored as sha-256 and a prefix, revoked, checked through the credential screen
// and a short cache.
import type { PrismaClient } from '../db/store.ts';
import {
  type CredentialFormat,
  generateCredential,
  hashToken,
  TOKEN_CHECKSUM_PURPOSE,
  urlSafeFormat,
} from './format.ts';
import type { CredentialScreen } from './screen.ts';
import { ScreenedLookup } from './screened-lookup.ts';
import { type Maker, type Makers, makerDocument, makerKeyOf } from './makers.ts';
import { RegistryError, type Actor, type AppRecord, type TokenRegistry } from './registry.ts';

/** secret scanners can match /tma_read_[A-Za-z0-9_-]{32}/ */
export const READ_KEY_PREFIX = 'tma_read_';
/** characters after the prefix: 26 random ones of nanoid's URL alphabet (156 bits), then the checksum */
const RANDOM_LENGTH = 32;
/** random characters shown in lists: enough to tell an app's keys apart, far too few to guess the rest */
const SHOWN_RANDOM = 8;
/** the least of a key revoke accepts: fewer characters would name keys the owner did not mean */
const MIN_GIVEN_RANDOM = 4;
export const MAX_ACTIVE_READ_KEYS = 20;
const keyPattern = (prefix: string) => new RegExp(`^${prefix}[A-Za-z0-9_-]{${RANDOM_LENGTH}}$`);
const givenPrefixPattern = (prefix: string) =>
  new RegExp(`^${prefix}[A-Za-z0-9_-]{${MIN_GIVEN_RANDOM},${SHOWN_RANDOM}}$`);
const KEY_PATTERN = keyPattern(READ_KEY_PREFIX);

/** what tells one kind of per-app key from another: its prefix, table, words and audit actions */
export interface KeyKind {
  prefix: string;
  /** "read key": used in messages */
  noun: string;
  /** the Prisma model holding the kind's keys (both have the same columns) */
  model: 'readKey' | 'serverKey';
  /** audit actions are `${audit}.create` and `${audit}.revoke` */
  audit: string;
  /** the prefix and 32 characters of nanoid's URL alphabet, the last 6 a keyed checksum */
  format: CredentialFormat;
}

export const READ_KEY_KIND: KeyKind = {
  prefix: READ_KEY_PREFIX,
  noun: 'read key',
  model: 'readKey',
  audit: 'read_key',
  format: urlSafeFormat(READ_KEY_PREFIX),
};

/** the part of a key model's delegate used here: the read key's, which the server key's matches column for column */
type KeyTable = PrismaClient['readKey'];
type KeyTables = Pick<PrismaClient, 'readKey' | 'serverKey'>;
const tableOf = (client: KeyTables, kind: KeyKind): KeyTable => client[kind.model] as unknown as KeyTable;
const CACHE_ENTRIES = 10_000;
/** revoked keys listed after the active ones (the newest): enough to recognise a recent revocation */
const LISTED_REVOKED = 50;

export interface ReadKeyInfo {
  /** tma_read_ and the first 8 random characters */
  prefix: string;
  appName: string;
  createdAt: Date;
  revokedAt: Date | null;
  /** who made it; lists say, and removing the member revokes it */
  madeBy: Maker;
}

/** what an accepted key may read */
export interface ReadKeyGrant {
  appId: number;
  appName: string;
}

export interface ReadKeysOptions {
  /** names the makers in lists; without it they are listed as unknown */
  makers?: Makers;
  now?: () => number;
}

/** what the cache holds of a key that exists: its grant, and whether it still works */
type KeyState = ReadKeyGrant & { active: boolean };

type KeyRow = { prefix: string; createdAt: Date; revokedAt: Date | null };
const UNKNOWN_MAKER: Maker = { ref: null, name: null, role: 'unknown' };

/** the full key's shape: anything else is refused without a lookup */
export function hasReadKeyShape(key: unknown): key is string {
  return typeof key === 'string' && KEY_PATTERN.test(key);
}

/**
 * What revoke takes as naming a key: its listed prefix or any start of it of at least tma_read_ and 4 characters,
 * or the whole key; an ellipsis copied from a list is dropped. Null for anything else.
 */
export function givenReadKey(text: string, prefix = READ_KEY_PREFIX): string | null {
  const given = text.trim().replace(/(?:…|\.\.\.)$/, '');
  return givenPrefixPattern(prefix).test(given) || keyPattern(prefix).test(given) ? given : null;
}

const infoOf = (row: KeyRow, appName: string, madeBy: Maker = UNKNOWN_MAKER): ReadKeyInfo => ({
  prefix: row.prefix,
  appName,
  createdAt: row.createdAt,
  revokedAt: row.revokedAt,
  madeBy,
});

export class AppKeys {
  /**
   * made-up keys refused without a lookup; known and unknown keys cached alike (a revoke made on another node takes
   * effect here within 5 s)
   */
  private readonly keys: ScreenedLookup<KeyState>;
  private readonly keyShape: RegExp;
  private readonly makers: Makers | undefined;

  constructor(
    readonly kind: KeyKind,
    private readonly prisma: PrismaClient,
    /** decides who manages which app's keys: registry.authorize with 'manage-tokens' */
    private readonly registry: TokenRegistry,
    options: ReadKeysOptions = {},
  ) {
    this.keyShape = keyPattern(kind.prefix);
    this.makers = options.makers;
    this.keys = new ScreenedLookup(
      prisma,
      registry.secrets,
      kind.model,
      kind.format,
      async (hash) => {
        const row = await tableOf(this.prisma, this.kind).findUnique({
          where: { hash },
          select: { appId: true, revokedAt: true, app: { select: { appName: true } } },
        });
        return row && { appId: row.appId, appName: row.app.appName, active: row.revokedAt === null };
      },
      { maxEntries: CACHE_ENTRIES, ...(options.now ? { now: options.now } : {}) },
    );
  }

  /** the kind's screen, loaded once (services load it at start, so a request never waits for it) */
  ready(): Promise<CredentialScreen> {
    return this.keys.ready();
  }

  /** the full key's shape: anything else is refused without a lookup */
  hasShape(key: unknown): key is string {
    return typeof key === 'string' && this.keyShape.test(key);
  }

  /** A new key for the app; the key itself is returned this once and never stored. */
  async create(appName: string, actor: Actor): Promise<{ key: string; readKey: ReadKeyInfo }> {
    const app = await this.registry.authorize({ appName }, actor, 'manage-tokens');
    const { noun, prefix: kindPrefix } = this.kind;
    const key = generateCredential(this.kind.format, this.registry.secrets.key(TOKEN_CHECKSUM_PURPOSE));
    const prefix = key.slice(0, kindPrefix.length + SHOWN_RANDOM);
    const row = await this.prisma.$transaction(
      async (tx) => {
        // the app row's lock makes two creations count one after the other, so the limit holds under races
        const locked = await tx.$queryRaw<{ id: number }[]>`SELECT id FROM apps WHERE id = ${app.appId} FOR UPDATE`;
        if (locked.length === 0) throw new RegistryError('app_not_found', `There is no app named "${appName}".`);
        // a member removed meanwhile makes nothing: their removal revoked what they made under this same lock
        if (app.role === 'editor' && actor.telegramId !== undefined) {
          const memberKey = this.registry.ownerKey(actor.telegramId);
          if ((await tx.appMember.count({ where: { appId: app.appId, memberKey } })) === 0)
            throw new RegistryError('app_not_found', `There is no app named "${appName}".`);
        }
        const active = await tableOf(tx, this.kind).count({ where: { appId: app.appId, revokedAt: null } });
        if (active >= MAX_ACTIVE_READ_KEYS) {
          throw new RegistryError(
            'key_limit',
            `${app.appName} already has ${MAX_ACTIVE_READ_KEYS} active ${noun}s: revoke one before creating another.`,
          );
        }
        const created = await tableOf(tx, this.kind).create({
          data: {
            appId: app.appId,
            hash: hashToken(key),
            prefix,
            checksummed: true,
            createdBy: makerKeyOf(this.registry, actor),
          },
        });
        await tx.auditLog.create({
          data: this.registry.auditRecord(app, actor, `${this.kind.audit}.create`, { prefix }),
        });
        return created;
      },
      // a busy embedded store (one connection, shared with the loader) may take a while to start the transaction
      { maxWait: 10_000, timeout: 10_000 },
    );
    const describe = await this.makers?.describer(app);
    return { key, readKey: infoOf(row, app.appName, describe?.(row.createdBy)) };
  }

  /** The app's active keys, newest first, then its most recently revoked ones; never the keys themselves. */
  async list(appName: string, actor: Actor): Promise<ReadKeyInfo[]> {
    const app = await this.registry.authorize({ appName }, actor, 'manage-tokens');
    const select = { prefix: true, createdAt: true, revokedAt: true, createdBy: true } as const;
    const [active, revoked, describe] = await Promise.all([
      tableOf(this.prisma, this.kind).findMany({
        where: { appId: app.appId, revokedAt: null },
        orderBy: { id: 'desc' },
        select,
      }),
      tableOf(this.prisma, this.kind).findMany({
        where: { appId: app.appId, revokedAt: { not: null } },
        orderBy: [{ revokedAt: 'desc' }, { id: 'desc' }],
        take: LISTED_REVOKED,
        select,
      }),
      this.makers?.describer(app),
    ]);
    return [...active, ...revoked].map((row) => infoOf(row, app.appName, describe?.(row.createdBy)));
  }

  /**
   * Revokes the key the text names (see givenReadKey), within one app when scope.appName is given. Keys of apps
   * the actor does not manage do not exist for them. Revoking a revoked key is refused ("already revoked");
   * when a start matches one active key and revoked ones, the active one is meant (the others cannot be revoked).
   */
  async revoke(text: string, actor: Actor, scope: { appName?: string } = {}): Promise<ReadKeyInfo> {
    const { noun, prefix: kindPrefix } = this.kind;
    const given = givenReadKey(text, kindPrefix);
    if (given === null) {
      throw new RegistryError(
        'key_not_found',
        `"${text}" names no ${noun}: give its prefix as listed (${kindPrefix} and at least ${MIN_GIVEN_RANDOM} more characters).`,
      );
    }
    const scoped =
      scope.appName === undefined
        ? undefined
        : await this.registry.authorize({ appName: scope.appName }, actor, 'manage-tokens');
    const isKey = this.keyShape.test(given);
    const rows = await tableOf(this.prisma, this.kind).findMany({
      where: {
        ...(isKey ? { hash: hashToken(given) } : { prefix: { startsWith: given } }),
        ...(scoped ? { appId: scoped.appId } : {}),
      },
      include: { app: { select: { appName: true } } },
      orderBy: { id: 'desc' },
      take: 50,
    });
    const apps = new Map<string, AppRecord | null>();
    const visible: typeof rows = [];
    // LIKE reads "_" as a wildcard: the start is compared again here
    for (const row of rows.filter((entry) => isKey || entry.prefix.startsWith(given))) {
      if (!apps.has(row.app.appName)) apps.set(row.app.appName, await this.managed(row.app.appName, actor));
      if (apps.get(row.app.appName)) visible.push(row);
    }
    const where = scoped ? ` of ${scoped.appName}` : '';
    const active = visible.filter((row) => row.revokedAt === null);
    if (visible.length === 0)
      throw new RegistryError('key_not_found', `There is no ${noun}${where} starting with "${given}".`);
    if (active.length > 1 || (active.length === 0 && visible.length > 1)) {
      throw new RegistryError(
        'key_ambiguous',
        `Several ${noun}s${where} start with "${given}": give more of the key, as listed.`,
      );
    }
    const target = active[0];
    if (!target) {
      const revoked = visible[0]!;
      throw new RegistryError(
        'key_revoked',
        `The ${noun} ${revoked.prefix} of ${revoked.app.appName} was already revoked (${revoked.revokedAt!.toISOString()}); nothing changed.`,
      );
    }
    const app = apps.get(target.app.appName)!;
    const revokedAt = new Date();
    await this.prisma.$transaction([
      tableOf(this.prisma, this.kind).updateMany({ where: { id: target.id, revokedAt: null }, data: { revokedAt } }),
      this.prisma.auditLog.create({
        data: this.registry.auditRecord(app, actor, `${this.kind.audit}.revoke`, { prefix: target.prefix }),
      }),
    ]);
    // refused on this node from now on; other nodes' caches ask their store again within 5 s
    await this.forget([target.hash]);
    const describe = await this.makers?.describer(app);
    return infoOf({ ...target, revokedAt }, app.appName, describe?.(target.createdBy));
  }

  /** Refuses the keys of these hashes on this node from now on: revoked here or elsewhere (a member's removal). */
  forget(hashes: readonly string[]): Promise<void> {
    return this.keys.forget(hashes);
  }

  /** false: certainly not a key of this kind issued here (wrong shape, no checksum of ours, not an older key) */
  async mayBeIssued(key: string): Promise<boolean> {
    return this.hasShape(key) && this.keys.mayBeIssued(key);
  }

  /**
   * The app a key may read or write; null for a malformed, made-up, unknown or revoked key. Malformed and made-up
   * ones (without this service's checksum, not among the keys issued before checksums) cost no lookup; unknown and
   * revoked ones are remembered for a second, like accepted ones.
   */
  async authenticate(key: string): Promise<ReadKeyGrant | null> {
    const state = this.hasShape(key) ? await this.keys.active(key) : null;
    return state && { appId: state.appId, appName: state.appName };
  }

  private async managed(appName: string, actor: Actor): Promise<AppRecord | null> {
    try {
      return await this.registry.authorize({ appName }, actor, 'manage-tokens');
    } catch (error) {
      if (error instanceof RegistryError && error.code === 'app_not_found') return null;
      throw error;
    }
  }
}

/** the read API's keys */
export class ReadKeys extends AppKeys {
  constructor(prisma: PrismaClient, registry: TokenRegistry, options: ReadKeysOptions = {}) {
    super(READ_KEY_KIND, prisma, registry, options);
  }
}

/** a read key as the CLI and the site list it: never the key itself */
export function readKeyDocument(info: ReadKeyInfo) {
  return {
    prefix: info.prefix,
    app_name: info.appName,
    created_at: info.createdAt.toISOString(),
    revoked_at: info.revokedAt?.toISOString() ?? null,
    made_by: makerDocument(info.madeBy),
  };
}

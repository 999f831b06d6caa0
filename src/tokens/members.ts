// An app's team: invites (codes shown once, single use, expiring), joining, the member list, removing or leaving,
// and handing the app over to a member. The registry decides who may (policy.ts); every change is audited.
import { randomBytes } from 'node:crypto';
import type { PrismaClient } from '../db/store.ts';
import type { Secrets } from './secret.ts';
import { hashToken } from './format.ts';
import { memberReference } from './makers.ts';
import { MEMBER_ROLES, type MemberRole } from './policy.ts';
import { RegistryError, type Actor, type AppRecord, type TokenRegistry } from './registry.ts';

export const INVITE_DAYS = 7;
/** 128 random bits as base64url: fits a /start payload (64 characters of [A-Za-z0-9_-]) with its prefix */
const CODE_BYTES = 16;
const CODE_PATTERN = /^[A-Za-z0-9_-]{22}$/;
const REFERENCE_PATTERN = /^[A-Za-z0-9_-]{12}$/;
const MAX_NAME = 64;

export interface Invite {
  /** shown this once; only its hash is stored */
  code: string;
  app: AppRecord;
  role: MemberRole;
  expiresAt: Date;
}

export interface Member {
  /** a short keyed reference of the member in this app, what removal and transfer name them by */
  ref: string;
  role: 'owner' | MemberRole;
  /** the Telegram first name given when they joined (kept when they own the app); null when unknown */
  name: string | null;
  addedAt: Date | null;
  /** the actor themselves */
  you: boolean;
  /** what they made that still works: removing them revokes it */
  made: Made;
}

/** the active keys (read and server) and public link a member made */
export interface Made {
  keys: number;
  shareLink: boolean;
}

/** "the 2 keys and the public link"; null when they made nothing that works */
export function madeText(made: Made): string | null {
  const parts = [
    ...(made.keys === 0 ? [] : [made.keys === 1 ? 'the key' : `the ${made.keys} keys`]),
    ...(made.shareLink ? ['the public link'] : []),
  ];
  return parts.length === 0 ? null : parts.join(' and ');
}

/** what a removal revoked, for this node's key caches: the hashes of the read keys, server keys and public links */
export interface RevokedKeys {
  readKeys: string[];
  serverKeys: string[];
  shareLinks: string[];
}

/** the transaction options of team changes: a busy embedded store may take a while to start one */
const TEAM_TRANSACTION = { maxWait: 10_000, timeout: 10_000 };

const teamChanged = (appName: string) =>
  new RegistryError('team_changed', `The team of ${appName} changed meanwhile: nothing changed. Look at it again.`);

/** a unique violation or a serialization failure: another change of the same team won the race */
function isRaceLoss(error: unknown): boolean {
  const text = `${(error as { code?: string })?.code ?? ''} ${(error as Error)?.message ?? ''}`;
  return /P2002|P2034|40001|40P01|23505|duplicate key|could not serialize|deadlock/i.test(text);
}

/** a /start payload that joins a team: this prefix and the invite's code */
export const INVITE_PAYLOAD = /^join_([A-Za-z0-9_-]{1,58})$/;

/** the bot deep link that accepts the invite; null while the bot's username is unknown */
export function inviteLink(botUsername: string | undefined, code: string): string | null {
  return botUsername ? `https://t.me/${botUsername}?start=join_${code}` : null;
}

/** a member with what is stored of them: their key and their private chat's key for alerts (never shown) */
interface MemberEntry {
  member: Member;
  key: string;
  chatKey: string | null;
}

/** what the team needs of the alert subscriptions */
export interface AlertChats {
  /** the keyed hash a subscription gives a chat */
  chatKey(chatId: string): string;
  /** the key of the app's subscribed chat whose id `matches`, null when none does */
  chatKeyWhere(appId: number, matches: (chatId: string) => boolean): Promise<string | null>;
}

export function isMemberRole(value: unknown): value is MemberRole {
  return typeof value === 'string' && (MEMBER_ROLES as readonly string[]).includes(value);
}

export class Members {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly registry: TokenRegistry,
    private readonly secrets: Secrets,
    /** the alert subscriptions' chat keys (src/alerts/subscriptions.ts): a leaver's alerts go with them */
    private readonly alertChats: AlertChats,
    /** drops this node's cached answers for revoked keys, so they are refused at once here */
    private readonly onRevoked: (revoked: RevokedKeys) => Promise<void> = async () => {},
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** a new invite to the app's team as the role; the code is returned this once */
  async createInvite(appName: string, role: MemberRole, actor: Actor): Promise<Invite> {
    const app = await this.registry.authorize({ appName }, actor, 'manage-members');
    const code = randomBytes(CODE_BYTES).toString('base64url');
    const expiresAt = new Date(this.now().getTime() + INVITE_DAYS * 86_400_000);
    await this.prisma.$transaction([
      this.prisma.appInvite.create({
        data: {
          appId: app.appId,
          codeHash: hashToken(code),
          role,
          createdBy: actor.telegramId === undefined ? null : this.registry.ownerKey(actor.telegramId),
          expiresAt,
        },
      }),
      this.prisma.auditLog.create({ data: this.registry.auditRecord(app, actor, 'member.invite', { role }) }),
    ]);
    return { code, app, role, expiresAt };
  }

  /**
   * Joins the team the code invites to, as its role (a member already there takes the invite's role). Only a join
   * uses the code up: the owner opening their own link leaves it for the person it is meant for.
   */
  async acceptInvite(
    code: string,
    telegramId: string,
    firstName?: string,
  ): Promise<{ app: AppRecord; role: MemberRole }> {
    const invalid = new RegistryError('invite_not_found', 'This invite link is not valid: ask for a new one.');
    if (!CODE_PATTERN.test(code)) throw invalid;
    const invite = await this.prisma.appInvite.findUnique({ where: { codeHash: hashToken(code) } });
    if (!invite || !isMemberRole(invite.role)) throw invalid;
    if (invite.usedAt) throw new RegistryError('invite_used', 'This invite link was already used: ask for a new one.');
    if (invite.expiresAt <= this.now())
      throw new RegistryError('invite_expired', 'This invite link has expired: ask for a new one.');
    const memberKey = this.registry.ownerKey(telegramId);
    const actor: Actor = { surface: 'bot', telegramId };
    const appRow = await this.prisma.app.findUnique({ where: { id: invite.appId }, select: { ownerKey: true } });
    if (!appRow) throw invalid;
    if (appRow.ownerKey === memberKey)
      throw new RegistryError('own_app', 'You own this app: send the invite link to the person you invite.');
    const role = invite.role;
    const name = firstName?.trim().slice(0, MAX_NAME) || null;
    const joined = await this.prisma.$transaction(async (tx) => {
      // two presses of one link: only the first marks it used
      const used = await tx.appInvite.updateMany({
        where: { id: invite.id, usedAt: null },
        data: { usedAt: this.now() },
      });
      if (used.count === 0) return false;
      await tx.appMember.upsert({
        where: { appId_memberKey: { appId: invite.appId, memberKey } },
        create: { appId: invite.appId, memberKey, role, name, chatKey: this.alertChats.chatKey(telegramId) },
        update: { role, name, chatKey: this.alertChats.chatKey(telegramId) },
      });
      return true;
    });
    if (!joined) throw new RegistryError('invite_used', 'This invite link was already used: ask for a new one.');
    const app = await this.registry.authorize({ appId: invite.appId }, actor, 'view');
    await this.prisma.auditLog.create({ data: this.registry.auditRecord(app, actor, 'member.join', { role }) });
    return { app, role };
  }

  /** the owner first, then the members by the time they joined */
  async list(appName: string, actor: Actor): Promise<{ app: AppRecord; members: Member[] }> {
    const app = await this.registry.authorize({ appName }, actor, 'view-members');
    return { app, members: await this.membersOf(app, actor) };
  }

  /**
   * Removes the member the reference names: the owner removes anyone, a member may remove themselves (leave). The
   * read keys, server keys and public link they made are revoked with them; `revoked` says what was.
   */
  async remove(appName: string, ref: string, actor: Actor): Promise<{ app: AppRecord; member: Member; revoked: Made }> {
    const app = await this.registry.authorize({ appName }, actor, 'view');
    const { member, key, chatKey } = await this.entryByRef(app, ref, actor);
    if (member.role === 'owner')
      throw new RegistryError('forbidden', 'The owner cannot leave or be removed: transfer the app first.');
    if (!member.you) await this.registry.authorize({ appName }, actor, 'manage-members');
    const revokedAt = this.now();
    const { revoked, hashes } = await this.prisma.$transaction(async (tx) => {
      // the app row's lock orders this after a key creation that counts on the same row (read-keys.ts)
      await tx.$queryRaw`SELECT id FROM apps WHERE id = ${app.appId} FOR UPDATE`;
      const removed = await tx.appMember.deleteMany({ where: { appId: app.appId, memberKey: key } });
      if (removed.count === 0) throw teamChanged(app.appName);
      // what the bot warns their chat about this app stops with them
      if (chatKey) await tx.alertSubscription.deleteMany({ where: { appId: app.appId, chatKey } });
      const theirs = { appId: app.appId, createdBy: key, revokedAt: null };
      const readKeys = (await tx.readKey.findMany({ where: theirs, select: { hash: true } })).map((row) => row.hash);
      const serverKeys = (await tx.serverKey.findMany({ where: theirs, select: { hash: true } })).map(
        (row) => row.hash,
      );
      const shareLinks = (await tx.shareLink.findMany({ where: theirs, select: { hash: true } })).map(
        (row) => row.hash,
      );
      await tx.readKey.updateMany({ where: theirs, data: { revokedAt } });
      await tx.serverKey.updateMany({ where: theirs, data: { revokedAt } });
      await tx.shareLink.updateMany({ where: theirs, data: { revokedAt } });
      const revoked: Made = { keys: readKeys.length + serverKeys.length, shareLink: shareLinks.length > 0 };
      await tx.auditLog.create({
        data: this.registry.auditRecord(app, actor, member.you ? 'member.leave' : 'member.remove', {
          member: ref,
          role: member.role,
          revoked_keys: revoked.keys,
          revoked_share_link: revoked.shareLink,
        }),
      });
      return { revoked, hashes: { readKeys, serverKeys, shareLinks } };
    }, TEAM_TRANSACTION);
    await this.onRevoked(hashes);
    return { app, member, revoked };
  }

  /** The actor leaves the app's team. */
  async leave(appName: string, actor: Actor): Promise<{ app: AppRecord; member: Member; revoked: Made }> {
    const app = await this.registry.authorize({ appName }, actor, 'view');
    const own = (await this.entries(app, actor)).find((entry) => entry.member.you);
    if (!own) throw new RegistryError('member_not_found', `You are not a member of ${app.appName}.`);
    return this.remove(appName, own.member.ref, actor);
  }

  /**
   * Hands the app to a member: they become its owner, the owner before them an editor, each keeping their name. Also
   * answers the reference of the owner before (null for an app that had none). Of two transfers at once, one is
   * made and the other refused (team_changed).
   */
  async transfer(
    appName: string,
    ref: string,
    actor: Actor,
  ): Promise<{ app: AppRecord; member: Member; ownerBefore: string | null }> {
    const app = await this.registry.authorize({ appName }, actor, 'transfer');
    const { member, key } = await this.entryByRef(app, ref, actor);
    if (member.role === 'owner') throw new RegistryError('forbidden', 'This member already owns the app.');
    // the owner's chat goes with them to their editor row, so that their alerts stop if they are removed later: the
    // actor's own when they transfer it themselves, else (an administrator's transfer) the subscribed private chat
    // that is the owner's
    const ownerChatKey =
      app.role === 'owner' && actor.telegramId !== undefined
        ? this.alertChats.chatKey(actor.telegramId)
        : app.ownerKey === null
          ? null
          : await this.alertChats.chatKeyWhere(app.appId, (chatId) => this.registry.ownerKey(chatId) === app.ownerKey);
    try {
      await this.prisma.$transaction(async (tx) => {
        // the app row's lock orders two transfers: the second finds the owner it was asked about gone
        const [locked] = await tx.$queryRaw<{ owner_key: string | null; owner_name: string | null }[]>`
          SELECT owner_key, owner_name FROM apps WHERE id = ${app.appId} FOR UPDATE`;
        if (!locked || locked.owner_key !== app.ownerKey) throw teamChanged(app.appName);
        const newOwner = await tx.appMember.findUnique({
          where: { appId_memberKey: { appId: app.appId, memberKey: key } },
          select: { name: true },
        });
        if (!newOwner) throw teamChanged(app.appName);
        await tx.appMember.delete({ where: { appId_memberKey: { appId: app.appId, memberKey: key } } });
        if (app.ownerKey !== null)
          await tx.appMember.create({
            data: {
              appId: app.appId,
              memberKey: app.ownerKey,
              role: 'editor',
              name: locked.owner_name,
              chatKey: ownerChatKey,
            },
          });
        await tx.app.update({ where: { id: app.appId }, data: { ownerKey: key, ownerName: newOwner.name } });
        await tx.auditLog.create({ data: this.registry.auditRecord(app, actor, 'app.transfer', { member: ref }) });
      }, TEAM_TRANSACTION);
    } catch (error) {
      if (!(error instanceof RegistryError) && isRaceLoss(error)) throw teamChanged(app.appName);
      throw error;
    }
    return {
      app: await this.registry.authorize({ appName }, actor, 'view'),
      member,
      ownerBefore: app.ownerKey === null ? null : this.reference(app, app.ownerKey),
    };
  }

  private async membersOf(app: AppRecord, actor: Actor): Promise<Member[]> {
    return (await this.entries(app, actor)).map((entry) => entry.member);
  }

  /** the owner and the members, each with their stored key (never shown) */
  private async entries(app: AppRecord, actor: Actor): Promise<MemberEntry[]> {
    const actorKey = actor.telegramId === undefined ? undefined : this.registry.ownerKey(actor.telegramId);
    const active = { appId: app.appId, revokedAt: null };
    const [rows, owner, readKeys, serverKeys, links] = await Promise.all([
      this.prisma.appMember.findMany({ where: { appId: app.appId }, orderBy: { addedAt: 'asc' } }),
      this.prisma.app.findUnique({ where: { id: app.appId }, select: { ownerName: true } }),
      this.prisma.readKey.groupBy({ by: ['createdBy'], where: active, _count: { _all: true } }),
      this.prisma.serverKey.groupBy({ by: ['createdBy'], where: active, _count: { _all: true } }),
      this.prisma.shareLink.findMany({ where: active, select: { createdBy: true } }),
    ]);
    const madeBy = (key: string): Made => ({
      keys: [...readKeys, ...serverKeys]
        .filter((group) => group.createdBy === key)
        .reduce((sum, group) => sum + group._count._all, 0),
      shareLink: links.some((link) => link.createdBy === key),
    });
    const entry = (key: string, role: Member['role'], name: string | null, addedAt: Date | null) => ({
      member: { ref: this.reference(app, key), role, name, addedAt, you: key === actorKey, made: madeBy(key) },
      key,
    });
    return [
      ...(app.ownerKey === null
        ? []
        : [{ ...entry(app.ownerKey, 'owner', owner?.ownerName ?? null, null), chatKey: null }]),
      ...rows.map((row) => ({
        ...entry(row.memberKey, isMemberRole(row.role) ? row.role : 'viewer', row.name, row.addedAt),
        chatKey: row.chatKey,
      })),
    ];
  }

  private async entryByRef(app: AppRecord, ref: string, actor: Actor): Promise<MemberEntry> {
    const found = REFERENCE_PATTERN.test(ref)
      ? (await this.entries(app, actor)).find((entry) => entry.member.ref === ref)
      : undefined;
    if (!found) throw new RegistryError('member_not_found', `${app.appName} has no member ${ref}.`);
    return found;
  }

  private reference(app: AppRecord, memberKey: string): string {
    return memberReference(this.secrets, app.appId, memberKey);
  }
}

/** a member as the site's API lists them */
export function memberDocument(member: Member) {
  return {
    ref: member.ref,
    role: member.role,
    name: member.name,
    added_at: member.addedAt?.toISOString() ?? null,
    you: member.you,
    made: { keys: member.made.keys, share_link: member.made.shareLink },
  };
}

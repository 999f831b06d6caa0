// What an app's owner (or an administrator) controls of its stored data: the retention period and erasing one
// user's data. The registry decides who may act on the app (members see the retention; only the owner changes it
// or erases, policy.ts); every change is written to the audit log, never with
// a raw Telegram user id (an erased user appears by a random reference made for that erase, which leads to no id).
import crypto from 'node:crypto';
import type { PrismaClient } from '../../db/store.ts';
import { scrubDeletedRows } from '../../db/scrub.ts';
import type { SqlReader, SqlRunner } from '../../db/sql.ts';
import type { Actor, AppRecord, TokenRegistry } from '../../tokens/registry.ts';
import { markErasure } from './erasure-watch.ts';
import type { Pseudonymiser } from '../request/pseudonym.ts';
import { RETENTION_CHOICES, type RetentionDays } from './retention.ts';
import {
  ERASED_TABLES,
  eraseUser,
  type ErasedRows,
  type ErasureOptions,
  type StoredOfUser,
  storedOfUser,
} from './user-erasure.ts';

/** a user of an app as an erase names them: their key in the app's events */
export interface ErasureSubject {
  app: AppRecord;
  userKey: Buffer;
}

export interface ErasureResult {
  app: AppRecord;
  /**
   * the erase's reference in the audit log, for whoever asked for it to quote: random, made once per erase, so
   * neither the log nor the reference leads back to the user (a keyed hash of a Telegram id reverses in seconds to
   * whoever holds the secret, the id space being small)
   */
  reference: string;
  deleted: ErasedRows;
  complete: boolean;
  /** what of the user the store's operator must still remove (src/db/scrub.ts), beyond a server's WAL and backups */
  leftToOperator: string[];
}

/** random bytes of a reference: 12 base64url characters, enough never to repeat in an audit log */
const REFERENCE_BYTES = 9;
/** a user key as it travels in a button's data (base64url of its 16 bytes) */
const USER_KEY_TEXT = /^[A-Za-z0-9_-]{22}$/;

/** the key of a user as text, for a surface that confirms an erase before it runs (a button's data) */
export const userKeyText = (userKey: Buffer) => userKey.toString('base64url');

/** the key a surface sent back, or null when it is not one */
export function userKeyOfText(text: string): Buffer | null {
  return USER_KEY_TEXT.test(text) ? Buffer.from(text, 'base64url') : null;
}

/** an app's retention as the site's API and the CLI print it: days, or null for forever */
export function retentionDocument({ app, days }: { app: AppRecord; days: RetentionDays }) {
  return { app_name: app.appName, retention_days: days, retention_choices: [...RETENTION_CHOICES, null] };
}

/** an erase as the site's API and the CLI print it: its reference (as `user`), the rows deleted per table */
export function erasureDocument(result: ErasureResult) {
  return {
    app_name: result.app.appName,
    user: result.reference,
    deleted: result.deleted,
    complete: result.complete,
    ...(result.leftToOperator.length > 0 && { left_to_operator: result.leftToOperator }),
  };
}

export class DataControls {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly sql: SqlRunner,
    private readonly registry: TokenRegistry,
    private readonly pseudonymiser: Pseudonymiser,
    private readonly erasureOptions: ErasureOptions = {},
    /** rewrites this node's durable log without the records already stored, which may hold the erased user */
    private readonly compactLog: () => Promise<void> = async () => {},
    /** the reads of the surfaces, within their budget: what a confirmation counts of a user before erasing */
    private readonly reads: SqlReader = sql,
    /** told what of an erase is left to the store's operator (src/db/scrub.ts), for the service's log */
    private readonly warn: (message: string) => void = () => {},
  ) {}

  async retention(appName: string, actor: Actor): Promise<{ app: AppRecord; days: RetentionDays }> {
    return this.retentionOf(await this.registry.authorize({ appName }, actor, 'view'));
  }

  private async retentionOf(app: AppRecord): Promise<{ app: AppRecord; days: RetentionDays }> {
    const row = await this.prisma.app.findUnique({ where: { id: app.appId }, select: { retentionDays: true } });
    return { app, days: row?.retentionDays ?? null };
  }

  /** sets the period; the retention purge deletes what is older within the hour */
  async setRetention(
    appName: string,
    days: RetentionDays,
    actor: Actor,
  ): Promise<{ app: AppRecord; days: RetentionDays }> {
    const { app, days: previous } = await this.retentionOf(
      await this.registry.authorize({ appName }, actor, 'manage-data'),
    );
    if (previous === days) return { app, days };
    await this.prisma.$transaction([
      this.prisma.app.update({ where: { id: app.appId }, data: { retentionDays: days } }),
      this.prisma.auditLog.create({
        data: this.registry.auditRecord(app, actor, 'app.retention', { days, previous }),
      }),
    ]);
    return { app, days };
  }

  /** the user a Telegram id names in the app, for a surface that asks before erasing */
  async subject(appName: string, telegramUserId: string, actor: Actor): Promise<ErasureSubject> {
    const app = await this.registry.authorize({ appName }, actor, 'manage-data');
    return { app, userKey: this.pseudonymiser.userKey(app.appId, telegramUserId) };
  }

  /** the user a Telegram id names in the app with what an erase would delete of them now, to confirm it with */
  async preview(
    appName: string,
    telegramUserId: string,
    actor: Actor,
  ): Promise<ErasureSubject & { stored: StoredOfUser }> {
    const subject = await this.subject(appName, telegramUserId, actor);
    return { ...subject, stored: await storedOfUser(this.reads, subject.app.appId, subject.userKey) };
  }

  /** erases every event and per-user row of the user the Telegram id names in the app */
  async eraseUser(appName: string, telegramUserId: string, actor: Actor): Promise<ErasureResult> {
    const { app, userKey } = await this.subject(appName, telegramUserId, actor);
    return this.erase(app, userKey, actor);
  }

  /** the same, for a user named by the key subject() gave */
  async eraseUserKey(appName: string, userKey: Buffer, actor: Actor): Promise<ErasureResult> {
    return this.erase(await this.registry.authorize({ appName }, actor, 'manage-data'), userKey, actor);
  }

  /**
   * Deletes the user's rows, then rewrites what held them: the tables (and on the embedded store its WAL), this
   * node's durable log, and, through the mark, every other node's (erasure-watch.ts), so none of the user's bytes
   * stay readable in a file of DATA_DIR or in the tables' files
   */
  private async erase(app: AppRecord, userKey: Buffer, actor: Actor): Promise<ErasureResult> {
    const reference = crypto.randomBytes(REFERENCE_BYTES).toString('base64url');
    const { deleted, complete } = await eraseUser(this.sql, app.appId, userKey, this.erasureOptions);
    // the deletion is audited and the logs are told before the rewrite, which can fail (a full disk): erasing again
    // then rewrites what is left
    await this.prisma.auditLog.create({
      data: this.registry.auditRecord(app, actor, 'user.erase', { user: reference, deleted, complete }),
    });
    await markErasure(this.sql);
    const leftToOperator = await scrubDeletedRows(this.sql, ERASED_TABLES);
    for (const message of leftToOperator) this.warn(message);
    await this.compactLog();
    return { app, reference, deleted, complete, leftToOperator };
  }
}

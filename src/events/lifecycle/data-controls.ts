// What an app's owner (or an administrator) controls of its stored data: the retention period and erasing one
// user's data. The registry decides who may act on the app (members see the retention; only the owner changes it
// or erases, policy.ts); every change is written to the audit log, never with
// a raw Telegram user id (an erased user appears by a keyed reference to their key).
import type { PrismaClient } from '../../db/store.ts';
import { scrubDeletedRows } from '../../db/scrub.ts';
import type { SqlReader, SqlRunner } from '../../db/sql.ts';
import type { Secrets } from '../../secret.ts';
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

/** a user of an app as an erase names them: their key in the app's events, and a reference safe to show and keep */
export interface ErasureSubject {
  app: AppRecord;
  userKey: Buffer;
  reference: string;
}

export interface ErasureResult {
  app: AppRecord;
  /** the erased user's reference: the same Telegram id in the same app always gives the same one */
  reference: string;
  deleted: ErasedRows;
  complete: boolean;
}

/** characters of a reference: enough to tell users apart in an audit log, far too few to find a user's key */
const REFERENCE_LENGTH = 12;
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

/** an erase as the site's API and the CLI print it: the user's reference, the rows deleted per table */
export function erasureDocument(result: ErasureResult) {
  return { app_name: result.app.appName, user: result.reference, deleted: result.deleted, complete: result.complete };
}

export class DataControls {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly sql: SqlRunner,
    private readonly registry: TokenRegistry,
    private readonly pseudonymiser: Pseudonymiser,
    private readonly secrets: Secrets,
    private readonly erasureOptions: ErasureOptions = {},
    /** rewrites this node's durable log without the records already stored, which may hold the erased user */
    private readonly compactLog: () => Promise<void> = async () => {},
    /** the reads of the surfaces, within their budget: what a confirmation counts of a user before erasing */
    private readonly reads: SqlReader = sql,
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
    const userKey = this.pseudonymiser.userKey(app.appId, telegramUserId);
    return { app, userKey, reference: this.reference(userKey) };
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
    const reference = this.reference(userKey);
    const { deleted, complete } = await eraseUser(this.sql, app.appId, userKey, this.erasureOptions);
    // the deletion is audited and the logs are told before the rewrite, which can fail (a full disk): erasing again
    // then rewrites what is left
    await this.prisma.auditLog.create({
      data: this.registry.auditRecord(app, actor, 'user.erase', { user: reference, deleted, complete }),
    });
    await markErasure(this.sql);
    await scrubDeletedRows(this.sql, ERASED_TABLES);
    await this.compactLog();
    return { app, reference, deleted, complete };
  }

  private reference(userKey: Buffer): string {
    return this.secrets.shortHash('erased-user', userKeyText(userKey)).slice(0, REFERENCE_LENGTH);
  }
}

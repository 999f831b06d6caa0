// An app as the surfaces see it: its row, the display prefix of its active token, and what the actor is to it.
import type { AppRole } from './policy.ts';

export interface AppRecord {
  appId: number;
  appName: string;
  bot: string;
  /** the bot's numeric id (decimal digits) its launches are checked for; null: not given yet */
  botId: string | null;
  domains: string[];
  ownerKey: string | null;
  /** the owner lists it in the public catalog */
  catalogListed: boolean;
  createdAt: Date;
  /** display prefix of the active token, null when revoked */
  tokenPrefix: string | null;
  tokenCreatedAt: Date | null;
  /** what the actor is to the app: its owner, a member, or an administrator acting on it */
  role: AppRole;
}

/** an app row as the registry reads it, with its active token (WITH_ACTIVE_TOKEN) */
export type AppRow = {
  id: number;
  appName: string;
  bot: string;
  botId: bigint | null;
  domains: string[];
  ownerKey: string | null;
  catalogListed: boolean;
  createdAt: Date;
  tokens: { prefix: string; createdAt: Date }[];
};

/** an app row with what the actor is to it */
export type AuthorizedApp = AppRow & { role: AppRole };

/** the include that reads an app row's active token */
export const WITH_ACTIVE_TOKEN = { tokens: { where: { revokedAt: null }, orderBy: { id: 'desc' }, take: 1 } } as const;

export function toRecord(app: AuthorizedApp): AppRecord {
  const token = app.tokens[0];
  return {
    appId: app.id,
    appName: app.appName,
    bot: app.bot,
    botId: app.botId === null ? null : String(app.botId),
    domains: app.domains,
    ownerKey: app.ownerKey,
    catalogListed: app.catalogListed,
    createdAt: app.createdAt,
    tokenPrefix: token?.prefix ?? null,
    tokenCreatedAt: token?.createdAt ?? null,
    role: app.role,
  };
}

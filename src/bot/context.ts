// The bot's context type and what every handler shares: the services, the clock, who acts and
// whether they are an administrator.
import type { ConversationFlavor } from '@grammyjs/conversations';
import type { Context } from 'grammy';
import type { Services } from '../services.ts';
import { memberReference } from '../tokens/makers.ts';
import type { Actor } from '../tokens/registry.ts';

export type BotContext = ConversationFlavor<Context>;

export interface BotDeps {
  services: Services;
  now(): Date;
  actorOf(ctx: Context): Actor;
  isAdmin(ctx: Context): boolean;
}

export function botDeps(services: Services, now: () => Date): BotDeps {
  const admins = new Set(services.config.adminTelegramIds);
  const isAdmin = (ctx: Context) => ctx.from !== undefined && admins.has(String(ctx.from.id));
  return {
    services,
    now,
    isAdmin,
    actorOf: (ctx) => ({ surface: 'bot', telegramId: String(ctx.from!.id), isAdmin: isAdmin(ctx) }),
  };
}

/** the presser's reference in an app's team (src/tokens/makers.ts): how lists tell what they made themselves */
export function yourReference(deps: BotDeps, ctx: Context, appId: number): string {
  const { secrets, registry } = deps.services;
  return memberReference(secrets, appId, registry.ownerKey(String(ctx.from!.id)));
}

/** a press that needs no words back: answered first, so the button stops spinning while the handler works */
export function answered<C extends Context>(handler: (ctx: C) => unknown): (ctx: C) => Promise<void> {
  return async (ctx) => {
    await ctx.answerCallbackQuery();
    await handler(ctx);
  };
}

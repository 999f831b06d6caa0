// The screens the bot draws: Analytics, lists of apps, an app's card. A button press edits the message
// the button sits on; a command gets a new message.
import { GrammyError, type InlineKeyboard } from 'grammy';
import { appSummaries, appSummary } from '../events/read/app-summary.ts';
import { lastDays } from '../events/read/dashboard.ts';
import { readLaunchChecks } from '../events/read/launch-checks.ts';
import type { AppRecord } from '../tokens/registry.ts';
import type { BotContext, BotDeps } from './context.ts';
import { analyticsKeyboard, appKeyboard, appsKeyboard } from './keyboards.ts';
import { HTML, TEXT, appCard, type AppView, countText } from './texts.ts';

const MAX_LISTED = 20;

/** a secret a message may show: a token or key in full (lists show only prefixes), a public link, an invite link */
const SHOWS_SECRET = /\btma_[A-Za-z0-9_-]{20,}|[?&]start=join_/;

/**
 * A button press edits the message the button sits on, unless that message shows a secret: shown once, it must stay
 * readable in the chat, so its buttons answer in a new message
 */
function editable(message: NonNullable<BotContext['callbackQuery']>['message']): boolean {
  if (!message) return false;
  const text = 'text' in message && typeof message.text === 'string' ? message.text : '';
  return !SHOWS_SECRET.test(text);
}

export interface Screens {
  show(ctx: BotContext, text: string, keyboard: InlineKeyboard): Promise<unknown>;
  analytics(ctx: BotContext): Promise<unknown>;
  apps(ctx: BotContext, apps: AppRecord[], heading: string, empty: string): Promise<unknown>;
  myApps(ctx: BotContext): Promise<unknown>;
  /** the app's card; note: what a step just did, said above it */
  app(ctx: BotContext, app: AppRecord, note?: string): Promise<unknown>;
}

/**
 * the site's Mini App entry, when the service has a public https address (Telegram requires https); with an app's
 * name, the entry that opens that app's dashboard
 */
export function dashboardUrl(publicUrl: string | undefined, appName?: string): string | undefined {
  if (!publicUrl?.startsWith('https://')) return undefined;
  return appName === undefined ? `${publicUrl}/webapp` : `${publicUrl}/webapp?app=${encodeURIComponent(appName)}`;
}

export function screens({ services, now, actorOf, isAdmin }: BotDeps): Screens {
  const view = async (app: AppRecord): Promise<AppView> => {
    await services.caughtUp();
    const [summary, launches] = await Promise.all([
      appSummary(services, app.appId),
      readLaunchChecks(services.store.reads, app.appId, lastDays(7, now())),
    ]);
    return { app, summary, launches };
  };

  const show: Screens['show'] = async (ctx, text, keyboard) => {
    if (editable(ctx.callbackQuery?.message)) {
      await ctx.editMessageText(text, { ...HTML, reply_markup: keyboard }).catch((error: unknown) => {
        if (!(error instanceof GrammyError && error.description.includes('message is not modified'))) throw error;
      });
    } else {
      await ctx.reply(text, { ...HTML, reply_markup: keyboard });
    }
  };

  const apps: Screens['apps'] = async (ctx, list, heading, empty) => {
    if (list.length === 0) return show(ctx, empty, analyticsKeyboard(isAdmin(ctx)));
    const listed = list.slice(0, MAX_LISTED);
    await services.caughtUp();
    const summaries = await appSummaries(
      services,
      listed.map((app) => app.appId),
    );
    const cards = listed.map((app) => appCard({ app, summary: summaries.get(app.appId)! }, now()));
    const more = list.length > MAX_LISTED ? `\n\n…and ${countText(list.length - MAX_LISTED)} more` : '';
    return show(ctx, `${heading}\n\n${cards.join('\n\n')}${more}`, appsKeyboard(listed));
  };

  return {
    show,
    apps,
    analytics: (ctx) =>
      show(ctx, TEXT.analytics, analyticsKeyboard(isAdmin(ctx), dashboardUrl(services.config.publicUrl))),
    // the user's own apps, also for an administrator
    myApps: async (ctx) =>
      apps(
        ctx,
        await services.registry.listApps({ ...actorOf(ctx), isAdmin: false }),
        '📋 <b>Your apps</b>',
        TEXT.noApps,
      ),
    app: async (ctx, app, note) =>
      show(
        ctx,
        `${note === undefined ? '' : `${note}\n\n`}${appCard(await view(app), now())}`,
        appKeyboard(app, dashboardUrl(services.config.publicUrl, app.appName)),
      ),
  };
}

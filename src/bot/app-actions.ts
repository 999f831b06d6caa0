// What the buttons of one app do: its card, revoke, regenerate, domains, read keys, data controls, the team, delete.
// One loader reads the app named in the callback data and lets through only those whose role allows the action
// (actions.ts, asked of the registry); forged data is refused.
import { Composer, type CallbackQueryMiddleware } from 'grammy';
import { READ_KEY_PREFIX } from '../tokens/read-keys.ts';
import { RegistryError, type AppRecord } from '../tokens/registry.ts';
import { answered, type BotContext, type BotDeps, yourReference } from './context.ts';
import { DIALOG } from './conversations.ts';
import { dataActions } from './data-actions.ts';
import { serverKeyActions } from './server-key-actions.ts';
import { shareActions } from './share-actions.ts';
import { teamActions } from './team-actions.ts';
import { APP_ACTIONS, APP_DATA, type AppAction, type AppContext, appActionData, type OnAppAction } from './actions.ts';
import {
  analyticsKeyboard,
  confirmKeyboard,
  domainsKeyboard,
  readKeyIssuedKeyboard,
  readKeysKeyboard,
  revokeReadKeyKeyboard,
} from './keyboards.ts';
import type { Screens } from './screens.ts';
import { HTML, TEXT, escapeHtml, readKeyIssued, readKeysText, revokeReadKeyQuestion, tokenIssued } from './texts.ts';

const domainsText = (app: AppRecord) =>
  `🌐 Domains of <b>${escapeHtml(app.appName)}</b>:\n${app.domains.map(escapeHtml).join('\n')}`;

export function appActions(deps: BotDeps, screens: Screens): Composer<BotContext> {
  const { registry, readKeys, config } = deps.services;
  const actions = new Composer<BotContext & { app: AppRecord }>();
  const on: OnAppAction = (action, handler) => {
    actions.callbackQuery(appActionData(action), handler);
  };

  on(
    'app',
    answered((ctx) => screens.app(ctx, ctx.app)),
  );
  on(
    'rev',
    answered((ctx) =>
      screens.show(
        ctx,
        `Revoke the token of <b>${escapeHtml(ctx.app.appName)}</b>? Events sent with it will be refused with “Token is invalid.”`,
        confirmKeyboard('rev!', ctx.app.appId, '🚫 Yes, revoke'),
      ),
    ),
  );
  on('rev!', async (ctx) => {
    const revoked = await registry.revoke(ctx.app.appName, deps.actorOf(ctx));
    await ctx.answerCallbackQuery({ text: 'Token revoked' });
    await screens.app(ctx, revoked);
  });
  on(
    'regen',
    answered((ctx) =>
      screens.show(
        ctx,
        `Issue a new token for <b>${escapeHtml(ctx.app.appName)}</b>? The current one stops working within seconds.`,
        confirmKeyboard('regen!', ctx.app.appId, '🔄 Yes, new token'),
      ),
    ),
  );
  on('regen!', async (ctx) => {
    const { token, app } = await registry.regenerate(ctx.app.appName, deps.actorOf(ctx));
    await ctx.answerCallbackQuery({ text: 'New token issued' });
    // the confirmation buttons go; the token arrives as a new message the user can keep
    await ctx.editMessageReplyMarkup().catch(() => undefined);
    await ctx.reply(tokenIssued(token, app, deps.services.config.publicUrl, false), {
      ...HTML,
      reply_markup: analyticsKeyboard(deps.isAdmin(ctx)),
    });
  });
  on(
    'dom',
    answered((ctx) =>
      screens.show(
        ctx,
        `${domainsText(ctx.app)}\n\nEvents are accepted from these domains only.`,
        domainsKeyboard(ctx.app),
      ),
    ),
  );
  on(
    'domadd',
    answered((ctx) => ctx.conversation.enter(DIALOG.addDomain, ctx.app.appName)),
  );
  on(
    'botid',
    answered((ctx) => ctx.conversation.enter(DIALOG.setBotId, ctx.app.appName)),
  );
  // listing in the public catalog is as public as a shared link: who may share may choose it
  on('cat', async (ctx) => {
    const changed = await registry.setCatalogListed(ctx.app.appName, !ctx.app.catalogListed, deps.actorOf(ctx));
    await ctx.answerCallbackQuery({
      text: changed.catalogListed ? 'Listed in the public catalog' : 'Taken out of the public catalog',
    });
    return screens.app(ctx, changed);
  });
  on('domdel', async (ctx) => {
    const domain = ctx.app.domains[Number(ctx.match[2])];
    if (domain === undefined) return ctx.answerCallbackQuery();
    // the registry's refusals (the last domain, a domain already gone) are told by the bot's error boundary
    const changed = await registry.removeDomain(ctx.app.appName, domain, deps.actorOf(ctx));
    await ctx.answerCallbackQuery({ text: `${domain} removed` });
    return screens.show(ctx, domainsText(changed), domainsKeyboard(changed));
  });

  const readKeysScreen = async (ctx: AppContext) => {
    const keys = await readKeys.list(ctx.app.appName, deps.actorOf(ctx));
    return screens.show(
      ctx,
      readKeysText(ctx.app, keys, yourReference(deps, ctx, ctx.app.appId)),
      readKeysKeyboard(ctx.app, keys),
    );
  };
  on('rk', answered(readKeysScreen));
  on('rknew', async (ctx) => {
    // the limit of active keys is a refusal the bot's error boundary tells
    const { key } = await readKeys.create(ctx.app.appName, deps.actorOf(ctx));
    await ctx.answerCallbackQuery({ text: 'Read key created' });
    await readKeysScreen(ctx);
    // the key arrives as a new message the user can keep; the list above no longer has it
    await ctx.reply(readKeyIssued(key, ctx.app, config.publicUrl), {
      ...HTML,
      reply_markup: readKeyIssuedKeyboard(ctx.app.appId),
    });
  });
  // the callback data carries the shown characters of the key's prefix; the revoke looks them up in this app only
  on(
    'rkrev',
    answered((ctx) =>
      screens.show(
        ctx,
        revokeReadKeyQuestion(ctx.app, READ_KEY_PREFIX + (ctx.match[2] ?? '')),
        revokeReadKeyKeyboard(ctx.app.appId, ctx.match[2] ?? ''),
      ),
    ),
  );
  on('rkrev!', async (ctx) => {
    try {
      const revoked = await readKeys.revoke(READ_KEY_PREFIX + (ctx.match[2] ?? ''), deps.actorOf(ctx), {
        appName: ctx.app.appName,
      });
      await ctx.answerCallbackQuery({ text: `Read key ${revoked.prefix}… revoked` });
    } catch (error) {
      // a key already revoked (a second press) or gone is told, and the list shows what is left
      if (!(error instanceof RegistryError)) throw error;
      await ctx.answerCallbackQuery({ text: error.message, show_alert: true });
    }
    return readKeysScreen(ctx);
  });
  dataActions(deps, screens, on);
  serverKeyActions(deps, screens, on);
  teamActions(deps, screens, on);
  shareActions(deps, screens, on);
  on(
    'del',
    answered((ctx) =>
      screens.show(
        ctx,
        `Delete <b>${escapeHtml(ctx.app.appName)}</b> with its token and all its recorded events? This cannot be undone.`,
        confirmKeyboard('del!', ctx.app.appId, '🗑 Yes, delete'),
      ),
    ),
  );
  on('del!', async (ctx) => {
    await registry.deleteApp(ctx.app.appName, deps.actorOf(ctx));
    await ctx.answerCallbackQuery({ text: 'App deleted' });
    await screens.show(
      ctx,
      `🗑 <b>${escapeHtml(ctx.app.appName)}</b> was deleted.`,
      analyticsKeyboard(deps.isAdmin(ctx)),
    );
  });

  const composer = new Composer<BotContext>();
  composer.callbackQuery(APP_DATA, ownedApp(deps, actions));
  return composer;
}

/** Loads the app whose id the callback data carries and runs `actions` with it, when the presser's role allows the action. */
function ownedApp(
  deps: BotDeps,
  actions: Composer<BotContext & { app: AppRecord }>,
): CallbackQueryMiddleware<BotContext> {
  const run = actions.middleware();
  return async (ctx, next) => {
    let app: AppRecord;
    try {
      const action = ctx.callbackQuery.data.slice(0, ctx.callbackQuery.data.indexOf(':')) as AppAction;
      app = await deps.services.registry.authorize(
        { appId: Number(ctx.match[1]) },
        deps.actorOf(ctx),
        APP_ACTIONS[action],
      );
    } catch (error) {
      // someone else's app looks exactly like one that does not exist; a member whose role does not allow the
      // action is told who may by the bot's error boundary
      if (error instanceof RegistryError && error.code === 'app_not_found')
        return ctx.answerCallbackQuery({ text: TEXT.notYours, show_alert: true });
      throw error;
    }
    return run(Object.assign(ctx, { app }), next);
  };
}

// What the buttons of an app's server keys do, as the read keys' buttons do for read keys: the list, a new key (shown
// once, in a message of its own), revoke (asking first) and revoke confirmed, with the key's shown characters.
import { InlineKeyboard } from 'grammy';
import { grammyInstallSnippet, grammySnippet, serverKeySnippet } from '../sdk-serving/integration-snippet.ts';
import { utcTime } from '../platform/time-format.ts';
import type { ReadKeyInfo } from '../tokens/read-keys.ts';
import { type AppRecord, RegistryError } from '../tokens/registry.ts';
import { SERVER_KEY_PREFIX } from '../tokens/server-keys.ts';
import { answered, type BotDeps, yourReference } from './context.ts';
import { type AppContext, appData, type OnAppAction } from './actions.ts';
import type { Screens } from './screens.ts';
import { ADDRESS_HINT, escapeHtml, HTML, madeByText, snippetBase } from './texts.ts';

const shownPart = (key: ReadKeyInfo) => key.prefix.slice(SERVER_KEY_PREFIX.length);

export function serverKeysText(app: AppRecord, keys: ReadKeyInfo[], yours: string): string {
  const active = keys.filter((key) => key.revokedAt === null);
  return [
    `🤖 Server keys of <b>${escapeHtml(app.appName)}</b>`,
    "A server key lets your bot or backend send this app's events (<code>POST /events</code> with " +
      '<code>Authorization: Bearer …</code>, no Origin needed): /start payloads, commands, payments and refunds. ' +
      'Keep it secret: never put it in a page.',
    '',
    ...(active.length === 0
      ? ['No active server keys.']
      : active.map(
          (key) =>
            `<code>${escapeHtml(key.prefix)}…</code> created ${utcTime(key.createdAt)} by ${escapeHtml(madeByText(key.madeBy, yours))}`,
        )),
  ].join('\n');
}

/** a new server key, shown this once, with the bot middleware's install and two lines, and a request that tries it */
export function serverKeyIssued(key: string, app: AppRecord, publicUrl: string | undefined): string {
  const base = snippetBase(publicUrl);
  return [
    `🤖 New server key for <b>${escapeHtml(app.appName)}</b>.`,
    '',
    'Your server key (shown only once, keep it secret):',
    `<code>${key}</code>`,
    '',
    'In a grammY bot:',
    `<pre>${escapeHtml(grammyInstallSnippet(base))}</pre>`,
    `<pre>${escapeHtml(grammySnippet(base, key, app.appName))}</pre>`,
    'Or try it:',
    `<pre>${escapeHtml(serverKeySnippet(base, key, app.appName))}</pre>`,
    ...(publicUrl ? [] : ['', ADDRESS_HINT]),
  ].join('\n');
}

function serverKeysKeyboard(app: AppRecord, keys: ReadKeyInfo[]): InlineKeyboard {
  const keyboard = new InlineKeyboard();
  for (const key of keys.filter((entry) => entry.revokedAt === null))
    keyboard.text(`🚫 Revoke ${key.prefix}…`, appData('skrev', app.appId, shownPart(key))).row();
  return keyboard.text('➕ New server key', appData('sknew', app.appId)).text('« Back', appData('app', app.appId));
}

export function serverKeyActions(deps: BotDeps, screens: Screens, on: OnAppAction): void {
  const { serverKeys, config } = deps.services;

  const listScreen = async (ctx: AppContext) => {
    const keys = await serverKeys.list(ctx.app.appName, deps.actorOf(ctx));
    return screens.show(
      ctx,
      serverKeysText(ctx.app, keys, yourReference(deps, ctx, ctx.app.appId)),
      serverKeysKeyboard(ctx.app, keys),
    );
  };
  on('sk', answered(listScreen));
  on('sknew', async (ctx) => {
    // the limit of active keys is a refusal the bot's error boundary tells
    const { key } = await serverKeys.create(ctx.app.appName, deps.actorOf(ctx));
    await ctx.answerCallbackQuery({ text: 'Server key created' });
    await listScreen(ctx);
    await ctx.reply(serverKeyIssued(key, ctx.app, config.publicUrl), {
      ...HTML,
      reply_markup: new InlineKeyboard().text('« Server keys', appData('sk', ctx.app.appId)),
    });
  });
  // the callback data carries the shown characters of the key's prefix; the revoke looks them up in this app only
  on(
    'skrev',
    answered((ctx) => {
      const prefix = SERVER_KEY_PREFIX + (ctx.match[2] ?? '');
      return screens.show(
        ctx,
        `Revoke the server key <code>${escapeHtml(prefix)}…</code> of <b>${escapeHtml(ctx.app.appName)}</b>? ` +
          'Events sent with it are refused at once.',
        new InlineKeyboard()
          .text('🚫 Yes, revoke', appData('skrev!', ctx.app.appId, ctx.match[2] ?? ''))
          .text('Cancel', appData('sk', ctx.app.appId)),
      );
    }),
  );
  on('skrev!', async (ctx) => {
    try {
      const revoked = await serverKeys.revoke(SERVER_KEY_PREFIX + (ctx.match[2] ?? ''), deps.actorOf(ctx), {
        appName: ctx.app.appName,
      });
      await ctx.answerCallbackQuery({ text: `Server key ${revoked.prefix}… revoked` });
    } catch (error) {
      // a key already revoked (a second press) or gone is told, and the list shows what is left
      if (!(error instanceof RegistryError)) throw error;
      await ctx.answerCallbackQuery({ text: error.message, show_alert: true });
    }
    return listScreen(ctx);
  });
}

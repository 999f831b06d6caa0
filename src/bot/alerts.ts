// /alerts: per app, what the bot warns the chat about (silence after 1, 6 or 24 h or never, refusal spikes, quotas,
// the first event, the weekly digest), and the button of a domain-mismatch alert that adds the refused domain.
import { Composer, InlineKeyboard } from 'grammy';
import type { AlertSettings, Subscription } from '../alerts/subscriptions.ts';
import { SILENCE_CHOICES } from '../alerts/subscriptions.ts';
import type { AppRecord } from '../tokens/registry.ts';
import { answered, type BotContext, type BotDeps } from './context.ts';
import { appData } from './actions.ts';
import type { Screens } from './screens.ts';
import { escapeHtml } from './texts.ts';

type Toggle = 'refusals' | 'quota' | 'firstEvent' | 'digest';

const TOGGLES: { field: Toggle; label: string }[] = [
  { field: 'refusals', label: 'Refusal spikes' },
  { field: 'quota', label: 'Quota reached' },
  { field: 'firstEvent', label: 'First event' },
  { field: 'digest', label: 'Weekly digest' },
];

const silenceLabel = (hours: AlertSettings['silenceHours']) => (hours === null ? 'off' : `${hours} h`);

/** the settings of one app's alerts, and back to that app's card (the alerts belong to it) */
function settingsKeyboard(subscription: Subscription, app: AppRecord): InlineKeyboard {
  const keyboard = new InlineKeyboard().text(
    `No events for: ${silenceLabel(subscription.silenceHours)}`,
    `alerts:set:${subscription.id}:silence`,
  );
  for (const { field, label } of TOGGLES)
    keyboard.row().text(`${subscription[field] ? '✅' : '▫️'} ${label}`, `alerts:set:${subscription.id}:${field}`);
  return keyboard.row().text(`« ${app.appName}`, appData('app', app.appId));
}

const settingsText = (appName: string) =>
  `🔔 Alerts of <b>${escapeHtml(appName)}</b> in this chat. A condition is told once, and again only after it ` +
  'cleared. Press to change.';

export function alerts(deps: BotDeps, screens: Screens): Composer<BotContext> {
  const { registry, alertSubscriptions } = deps.services;
  const composer = new Composer<BotContext>();
  const chatOf = (ctx: BotContext) => String(ctx.chat!.id);

  const list = async (ctx: BotContext) => {
    const apps = await registry.listApps(deps.actorOf(ctx));
    if (apps.length === 0) return ctx.reply('You have no apps yet: /newtoken registers one.');
    const keyboard = new InlineKeyboard();
    for (const app of apps) keyboard.text(app.appName, `alerts:app:${app.appId}`).row();
    return screens.show(ctx, '🔔 Alerts: choose an app.', keyboard);
  };
  composer.command('alerts', list);
  // settings messages sent before their button led back to the app's card still carry this one
  composer.callbackQuery('alerts:list', answered(list));

  composer.callbackQuery(
    /^alerts:app:(\d+)$/,
    answered(async (ctx) => {
      const app = await registry
        .authorize({ appId: Number(ctx.match[1]) }, deps.actorOf(ctx), 'view')
        .catch(() => null);
      if (!app) return ctx.reply('This app is not yours or no longer exists.');
      const subscription = await alertSubscriptions.subscribe(app.appId, chatOf(ctx));
      return screens.show(ctx, settingsText(app.appName), settingsKeyboard(subscription, app));
    }),
  );

  composer.callbackQuery(/^alerts:set:(\d+):(silence|refusals|quota|firstEvent|digest)$/, async (ctx) => {
    const current = await alertSubscriptions.ofChat(Number(ctx.match[1]), chatOf(ctx));
    const app =
      current && (await registry.authorize({ appId: current.appId }, deps.actorOf(ctx), 'view').catch(() => null));
    if (!current || !app) return ctx.answerCallbackQuery({ text: 'These alerts are not yours.' });
    const field = ctx.match[2] as Toggle | 'silence';
    const change: Partial<AlertSettings> =
      field === 'silence'
        ? {
            silenceHours: SILENCE_CHOICES[(SILENCE_CHOICES.indexOf(current.silenceHours) + 1) % SILENCE_CHOICES.length],
          }
        : { [field]: !current[field] };
    const changed = await alertSubscriptions.change(current.id, chatOf(ctx), change);
    await ctx.answerCallbackQuery({ text: 'Saved' });
    return screens.show(ctx, settingsText(app.appName), settingsKeyboard(changed ?? current, app));
  });

  // the domain a refusal-spike alert offers: asked again before anything changes
  composer.callbackQuery(
    /^alert:dom(!?):(\d+)$/,
    answered(async (ctx) => {
      const subscription = await alertSubscriptions.ofChat(Number(ctx.match[2]), chatOf(ctx));
      const domain = subscription && (await deps.services.alertChecker.offeredDomain(subscription.id));
      const app =
        subscription &&
        (await registry.authorize({ appId: subscription.appId }, deps.actorOf(ctx), 'view').catch(() => null));
      if (!subscription || !domain || !app) return ctx.reply('This alert is over or not yours.');
      if (ctx.match[1] !== '!')
        return ctx.reply(`Add <b>${escapeHtml(domain)}</b> to the domains of <b>${escapeHtml(app.appName)}</b>?`, {
          parse_mode: 'HTML',
          reply_markup: new InlineKeyboard().text('➕ Yes, add it', `alert:dom!:${subscription.id}`),
        });
      const changed = await registry.addDomain(app.appName, domain, deps.actorOf(ctx));
      return ctx.reply(
        `Added. Domains of <b>${escapeHtml(app.appName)}</b>: ${changed.domains.map(escapeHtml).join(', ')}`,
        { parse_mode: 'HTML' },
      );
    }),
  );
  return composer;
}

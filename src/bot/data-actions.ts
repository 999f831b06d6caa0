// What the buttons of an app's data controls do: choose the retention period (asking first when it keeps less)
// and erase a user's data (the dialog asks for the id; the erase runs when its confirmation is pressed).
import { userKeyOfText } from '../events/lifecycle/data-controls.ts';
import { parseRetention, retentionText, shortens, type RetentionDays } from '../events/lifecycle/retention.ts';
import { answered, type BotDeps } from './context.ts';
import { DIALOG } from './conversations.ts';
import { dataControlsBackKeyboard, dataControlsKeyboard, retentionConfirmKeyboard } from './keyboards.ts';
import type { AppContext, OnAppAction } from './actions.ts';
import type { Screens } from './screens.ts';
import { dataControlsText, erasedText, erasedUserIdIn, retentionQuestion } from './texts.ts';

export function dataActions(deps: BotDeps, screens: Screens, on: OnAppAction): void {
  const { dataControls, pseudonymiser } = deps.services;

  const dataScreen = (ctx: AppContext, days: RetentionDays) =>
    screens.show(ctx, dataControlsText(ctx.app, days, deps.now()), dataControlsKeyboard(ctx.app.appId, days));

  const setRetention = async (ctx: AppContext, days: RetentionDays) => {
    const changed = await dataControls.setRetention(ctx.app.appName, days, deps.actorOf(ctx));
    await ctx.answerCallbackQuery({ text: `Retention: ${retentionText(changed.days)}` });
    return dataScreen(ctx, changed.days);
  };

  on(
    'data',
    answered(async (ctx) => dataScreen(ctx, (await dataControls.retention(ctx.app.appName, deps.actorOf(ctx))).days)),
  );
  on('ret', async (ctx) => {
    const chosen = parseRetention(ctx.match[2] ?? '');
    if (!chosen.ok) return ctx.answerCallbackQuery();
    const { days: current } = await dataControls.retention(ctx.app.appName, deps.actorOf(ctx));
    if (chosen.value === null || !shortens(current, chosen.value)) return setRetention(ctx, chosen.value);
    await ctx.answerCallbackQuery();
    return screens.show(
      ctx,
      retentionQuestion(ctx.app, chosen.value, deps.now()),
      retentionConfirmKeyboard(ctx.app.appId, chosen.value),
    );
  });
  on('ret!', async (ctx) => {
    const chosen = parseRetention(ctx.match[2] ?? '');
    if (!chosen.ok) return ctx.answerCallbackQuery();
    return setRetention(ctx, chosen.value);
  });

  on(
    'erase',
    answered((ctx) => ctx.conversation.enter(DIALOG.eraseUser, ctx.app.appName)),
  );
  // the button carries the user's key (forged data can only name a user of an app the presser manages)
  on('erase!', async (ctx) => {
    const userKey = userKeyOfText(ctx.match[2] ?? '');
    if (!userKey) return ctx.answerCallbackQuery();
    await ctx.answerCallbackQuery({ text: 'Erasing…' });
    // what this node accepted of the user's events is stored first, so the erase covers it too
    await deps.services.caughtUp();
    const erased = await dataControls.eraseUserKey(ctx.app.appName, userKey, deps.actorOf(ctx));
    return screens.show(ctx, erasedText(erased, shownUserId(ctx, userKey)), dataControlsBackKeyboard(ctx.app.appId));
  });

  /**
   * The Telegram id the confirmation showed, read back from its text as Telegram sends it with the press (the bot
   * keeps it nowhere), when it names the user the button erases; else null
   */
  const shownUserId = (ctx: AppContext, userKey: Buffer): string | null => {
    const message = ctx.callbackQuery.message;
    const shown = erasedUserIdIn(message && 'text' in message ? message.text : undefined);
    return shown !== null && pseudonymiser.userKey(ctx.app.appId, shown).equals(userKey) ? shown : null;
  };
}

// Sends the alerts the checker finds due, once a minute, on the one node that holds the alert leadership; messages go
// out one after another through the bot's API (auto-retry waits out Telegram's "retry after").
import type { Api } from 'grammy';
import { InlineKeyboard } from 'grammy';
import type { AlertChecker, AlertMessage } from '../alerts/checker.ts';
import type { Leadership } from '../db/leadership.ts';
import type { BotOptions } from './bot.ts';

const CHECK_EVERY_MS = 60_000;

/** sends each message in turn; a chat that cannot be reached (the bot blocked, say) does not stop the others */
export async function sendAlerts(api: Api, messages: AlertMessage[], log: BotOptions['log']): Promise<number> {
  let sent = 0;
  for (const message of messages) {
    try {
      await api.sendMessage(message.chatId, message.text, {
        parse_mode: 'HTML',
        reply_markup: message.button ? new InlineKeyboard().text(message.button.text, message.button.data) : undefined,
      });
      sent++;
    } catch (error) {
      log.warn({ err: (error as Error).message }, 'could not send an alert');
    }
  }
  return sent;
}

/** one round on this node: when it leads, check and send; false when another node leads */
export async function alertRound(
  api: Api,
  checker: AlertChecker,
  leadership: Leadership | null,
  now: Date,
  log: BotOptions['log'],
): Promise<boolean> {
  if (!leadership) return false;
  await sendAlerts(api, await checker.check(now), log);
  return true;
}

export interface AlertSenderOptions {
  tryLeadership(): Promise<Leadership | null>;
  now(): Date;
  log: BotOptions['log'];
}

/** checks and sends every minute until stopped; the leadership is kept between rounds and taken again when lost */
export function startAlertSender(api: Api, checker: AlertChecker, options: AlertSenderOptions): () => Promise<void> {
  let leadership: Leadership | null = null;
  let stopped = false;
  let round: Promise<unknown> = Promise.resolve();
  const tick = async () => {
    try {
      if (!leadership) {
        const taken = await options.tryLeadership();
        // asked again at the next round once lost
        void taken?.lost.then(() => {
          if (leadership === taken) leadership = null;
        });
        leadership = taken;
      }
      await alertRound(api, checker, leadership, options.now(), options.log);
    } catch (error) {
      options.log.warn({ err: (error as Error).message }, 'alert round failed');
    }
  };
  const timer = setInterval(() => {
    if (!stopped) round = round.then(tick);
  }, CHECK_EVERY_MS);
  timer.unref();
  round = tick();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await round;
    await leadership?.release();
  };
}

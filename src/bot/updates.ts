// How the management bot receives its updates: at a webhook of the service's own HTTP app when BOT_WEBHOOK_URL is set
// (every node serves it), else by long polling on exactly one node, the one holding the polling leadership.
import type { Bot } from 'grammy';
import type { Leadership } from '../db/leadership.ts';
import type { BotContext } from './context.ts';
import { type BotOptions, registerCommands } from './bot.ts';

export interface UpdateSettings {
  adminTelegramIds: string[];
  publicUrl?: string;
  botWebhookUrl?: string;
}

export interface UpdateSource {
  /** the secret Telegram sends back with each webhook call (X-Telegram-Bot-Api-Secret-Token) */
  webhookSecret: string;
  /** takes the polling job if no other node has it; null: another node polls */
  tryPollingLeadership(): Promise<Leadership | null>;
}

type UpdatesLog = BotOptions['log'] & { info(object: object, message: string): void };

/** Telegram unreachable, or another node polling: the next attempt waits this long */
const RETRY_MS = 15_000;
/** a node that does not poll asks again this often, so it takes over soon after the polling node stops */
const LEADERSHIP_RETRY_MS = 5_000;

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    signal.addEventListener('abort', () => resolve(), { once: true });
  });

/**
 * Asks Telegram who the bot is, once: Bot.init() would retry a network error itself, its wait doubling without a
 * word, where the update loop says why and tries again every 15 s
 */
async function identify(bot: Bot<BotContext>): Promise<void> {
  if (!bot.isInited()) bot.botInfo = await bot.api.getMe();
}

/**
 * Receives updates until `signal` aborts. Telegram being unreachable never stops the service: the bot retries and
 * logs why.
 */
export async function receiveUpdates(
  bot: Bot<BotContext>,
  settings: UpdateSettings,
  source: UpdateSource,
  log: UpdatesLog,
  signal: AbortSignal,
): Promise<void> {
  if (settings.botWebhookUrl) return registerWebhook(bot, settings, source, log, signal);
  let waitingLogged = false;
  while (!signal.aborted) {
    const leadership = await source.tryPollingLeadership();
    if (!leadership) {
      if (!waitingLogged) log.info({}, 'another node polls the bot updates; this one stands by');
      waitingLogged = true;
      await pause(LEADERSHIP_RETRY_MS, signal);
      continue;
    }
    waitingLogged = false;
    log.info({}, 'polling the bot updates on this node');
    // released by this loop itself: not a loss worth a warning
    let letGo = false;
    // stopping confirms the last updates with Telegram, which may be out of reach: never an unhandled rejection
    const stopPolling = () =>
      bot.stop().catch((error: Error) => log.warn({ err: error.message }, 'bot polling stopped without Telegram'));
    const stopOnLoss = leadership.lost.then(async () => {
      if (!signal.aborted && !letGo) log.warn({}, 'lost the polling leadership; stopping the bot polling');
      await stopPolling();
    });
    const stopOnAbort = () => void stopPolling();
    signal.addEventListener('abort', stopOnAbort, { once: true });
    let failed = false;
    try {
      await identify(bot);
      // done here, where a network error fails at once: bot.start() would retry it without a word
      await bot.api.deleteWebhook({ drop_pending_updates: false });
      await registerCommands(bot, settings.adminTelegramIds, settings.publicUrl, log);
      await bot.start({ drop_pending_updates: false });
    } catch (error) {
      log.error({ err: (error as Error).message }, 'bot cannot reach Telegram; retrying in 15 s');
      failed = true;
    } finally {
      signal.removeEventListener('abort', stopOnAbort);
      letGo = true;
      await leadership.release();
      await stopOnLoss;
    }
    // waits without the leadership, so another node may poll meanwhile
    if (failed) await pause(RETRY_MS, signal);
  }
}

/** webhook mode: every node tells Telegram the same address and secret, so which node does it does not matter */
async function registerWebhook(
  bot: Bot<BotContext>,
  settings: UpdateSettings,
  source: UpdateSource,
  log: UpdatesLog,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await identify(bot);
      await registerCommands(bot, settings.adminTelegramIds, settings.publicUrl, log);
      await bot.api.setWebhook(settings.botWebhookUrl!, {
        secret_token: source.webhookSecret,
        drop_pending_updates: false,
      });
      log.info({ url: settings.botWebhookUrl }, 'bot updates arrive at the webhook');
      return;
    } catch (error) {
      log.error({ err: (error as Error).message }, 'cannot register the bot webhook with Telegram; retrying in 15 s');
      await pause(RETRY_MS, signal);
    }
  }
}

/** BOT_WEBHOOK_SECRET, else one every node derives alike from the shared secret and the bot's token */
export function webhookSecret(
  config: { botToken?: string; botWebhookSecret?: string },
  secrets: { hmac(purpose: string, data: string): Buffer },
): string {
  return config.botWebhookSecret ?? secrets.hmac('bot-webhook', config.botToken ?? '').toString('base64url');
}

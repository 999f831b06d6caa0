// The package entry: `bot.use(analytics({ serverKey, appName, endpoint }))` records /start payloads, commands and
// Telegram Stars payments and refunds from the integrator's own bot, without ever holding up its update handling.
import type { Context, MiddlewareFn } from 'grammy';
import { type BotEvent, botEventOf, type EventSource } from './events.ts';
import { EventSender } from './sender.ts';
import { dailySessionId } from './session.ts';

export type { BotEvent, BotEventName } from './events.ts';
export { BOT_PLATFORM } from './events.ts';

export interface AnalyticsOptions {
  /** the app's server key (tma_server_…), issued by the service's bot or CLI; keep it out of any page */
  serverKey: string;
  /** the app_name the app was registered under */
  appName: string;
  /** the service's base URL, e.g. https://analytics.example.com */
  endpoint: string;
  /** how long an event may wait for others to share its request; default 1000 ms */
  flushIntervalMs?: number;
  /** events per request, at most 100; default 20 */
  maxBatchSize?: number;
  /** events kept in memory while the service is unreachable; default 1000 */
  maxQueuedEvents?: number;
  /** further attempts after a network error, a 5xx or a 429; default 3 */
  retries?: number;
  /** the first retry's delay, doubled for each next one; default 1000 ms */
  retryDelayMs?: number;
  /** per request; default 10000 ms */
  timeoutMs?: number;
  /** for a proxy or a test; default the global fetch */
  fetch?: typeof fetch;
  /** told about events that could not be delivered; default a console warning. Never thrown into the bot */
  onError?: (error: Error) => void;
}

export type AnalyticsMiddleware<C extends Context = Context> = MiddlewareFn<C> & {
  /** resolves once every event recorded so far has been delivered or given up on */
  flush(): Promise<void>;
  /** flushes and records nothing more: call it after bot.stop() so the last events are not lost */
  stop(): Promise<void>;
};

const SERVER_KEY_PREFIX = 'tma_server_';
/** the service accepts at most this many events in one request */
const MAX_EVENTS_PER_REQUEST = 100;

function warn(error: Error): void {
  console.warn(`tma-analytics-grammy: ${error.message}`);
}

export function analytics<C extends Context = Context>(options: AnalyticsOptions): AnalyticsMiddleware<C> {
  // a setup mistake is thrown once, at startup, where the integrator sees it; nothing is thrown after that
  if (typeof options.serverKey !== 'string' || !options.serverKey.startsWith(SERVER_KEY_PREFIX))
    throw new TypeError(`analytics(): serverKey must be a server key starting with "${SERVER_KEY_PREFIX}"`);
  if (typeof options.appName !== 'string' || options.appName === '')
    throw new TypeError('analytics(): appName is required');
  if (typeof options.endpoint !== 'string' || !/^https?:\/\//.test(options.endpoint))
    throw new TypeError('analytics(): endpoint must be the service URL, e.g. https://analytics.example.com');
  const onError = options.onError ?? warn;
  const fetchFunction = options.fetch ?? globalThis.fetch;
  if (typeof fetchFunction !== 'function') throw new TypeError('analytics(): no fetch available; pass options.fetch');

  let botId: number | undefined;
  const sender = new EventSender<BotEvent>({
    url: `${options.endpoint.replace(/\/+$/, '')}/events`,
    serverKey: options.serverKey,
    flushIntervalMs: options.flushIntervalMs ?? 1000,
    maxBatchSize: Math.min(Math.max(1, options.maxBatchSize ?? 20), MAX_EVENTS_PER_REQUEST),
    maxQueuedEvents: options.maxQueuedEvents ?? 1000,
    retries: options.retries ?? 3,
    retryDelayMs: options.retryDelayMs ?? 1000,
    timeoutMs: options.timeoutMs ?? 10_000,
    botId: () => botId,
    fetch: (input, init) => fetchFunction(input, init),
    onError,
  });
  const serverKey = options.serverKey;
  const sessionId = (userId: number, at: number) => dailySessionId(serverKey, userId, at);

  const middleware: MiddlewareFn<C> = (ctx, next) => {
    try {
      // the bot's id lets the service check the launches Telegram signs for this bot (and never its token)
      botId ??= (ctx.me as Context['me'] | undefined)?.id;
      const source: EventSource = { appName: options.appName, botUsername: botUsername(ctx), sessionId };
      const event = botEventOf(ctx.message, ctx.from, source, Date.now());
      if (event) sender.add(event);
    } catch (error) {
      onErrorSafely(onError, error);
    }
    // the bot's own handlers run at once: sending happens later, from the sender's queue
    return next();
  };
  return Object.assign(middleware, { flush: () => sender.flush(), stop: () => sender.stop() });
}

/** a context built by hand (as in some tests) may lack the bot's identity: then a mention of any bot counts */
function botUsername(ctx: Context): string | undefined {
  return (ctx.me as Context['me'] | undefined)?.username;
}

function onErrorSafely(onError: (error: Error) => void, error: unknown): void {
  try {
    onError(error instanceof Error ? error : new Error(String(error)));
  } catch {
    // an error handler that throws must not reach the bot either
  }
}

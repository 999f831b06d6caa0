// Runs the service on an open store: the services, the HTTP app on the socket that answered "starting", the
// management bot, the operator's socket, the background work; and stops it all cleanly on SIGTERM or SIGINT.
import type { BotOptions } from '../bot/bot.ts';
import type { Config } from '../platform/config.ts';
import { tryLeadership } from '../db/leadership.ts';
import { controlSocketPath } from '../db/embedded/owner-lock.ts';
import type { Store } from '../db/store.ts';
import { buildApp } from './app.ts';
import { startOperatorSocket } from './operator-socket.ts';
import type { StartingServer } from './starting.ts';
import { errorSummary } from '../platform/error-summary.ts';
import { serviceLogger } from '../platform/logger.ts';
import { startRankingSchedule } from '../ranking/schedule.ts';
import { secretInDataDir } from '../tokens/secret.ts';
import { createServices, type Services, type ServicesOptions } from '../services.ts';

/**
 * The longest a stop may take: requests in flight answered, the log loaded for at most 10 s (IngestLog.close), the
 * store closed; beyond it the process exits anyway.
 */
const STOP_DEADLINE_MS = 20_000;

/**
 * The management bot, when BOT_TOKEN gives one, with what runs it: grammY and its plugins are loaded only then.
 * log is the service's logger.
 */
async function managementBot(config: Config, services: Services, log: BotOptions['log']) {
  if (!config.botToken) return undefined;
  const [{ createBot }, { receiveUpdates, webhookSecret }, { startAlertSender }, { tellAdministratorsOfLoss }] =
    await Promise.all([
      import('../bot/bot.ts'),
      import('../bot/updates.ts'),
      import('../bot/alert-sender.ts'),
      import('../bot/log-loss-notice.ts'),
    ]);
  const bot = createBot(services, { token: config.botToken, apiRoot: config.telegramApiRoot, log });
  return {
    bot,
    secret: webhookSecret(config, services.secrets),
    receiveUpdates,
    startAlertSender,
    tellAdministratorsOfLoss,
  };
}

/**
 * everything on the store start() opened, on the socket it listens on; `events` as start() was given it, and the
 * check of the log that start() began
 */
export async function serve(
  config: Config,
  store: Store,
  listening: StartingServer,
  options: Pick<ServicesOptions, 'events' | 'logProbed'> = {},
): Promise<void> {
  const log = serviceLogger(config.logLevel);
  const services = await createServices(config, store, {
    ...options,
    onBackgroundError: (error, what) => log.warn({ failure: errorSummary(error) }, what ?? 'background write failed'),
    logger: log,
  });
  // the bot serves the app's webhook route, so it exists first
  const managed = await managementBot(config, services, log);
  const app = await buildApp(services, {
    site: { botUsername: () => (managed?.bot.isInited() ? managed.bot.botInfo.username : undefined) },
    botWebhook:
      managed?.secret && config.botWebhookUrl
        ? { bot: managed.bot, path: new URL(config.botWebhookUrl).pathname, secret: managed.secret }
        : undefined,
    serverFactory: listening.serverFactory,
    logger: log,
  });
  // once the app is closing (it answers "Connection: close"), the socket stops accepting and drops idle connections;
  // the stop waits until every connection ended
  let connectionsEnded = Promise.resolve();
  app.addHook('preClose', async () => {
    connectionsEnded = listening.close();
  });
  const stopControl =
    store.kind === 'embedded' ? await startOperatorSocket(controlSocketPath(config.dataDir), services, log) : undefined;
  const stopRanking = startRankingSchedule(store.sql, { log, reads: store.reads });

  const botStopped = new AbortController();
  let stopAlerts: (() => Promise<void>) | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'stopping: finishing requests in flight');
    // a store that hangs (a stalled server, a wedged engine) must not keep the process: what was acknowledged is
    // on disk in the log already, and the next start loads it
    setTimeout(() => {
      log.error({ signal }, `not stopped within ${STOP_DEADLINE_MS / 1000} s: exiting; the log keeps what waits`);
      process.exit(1);
    }, STOP_DEADLINE_MS);
    // first: no operator command starts on services about to stop
    await stopControl?.();
    botStopped.abort();
    stopRanking();
    await managed?.bot.stop();
    await stopAlerts?.();
    await app.close(); // stops accepting (its preClose hook below), answers requests in flight, commits included
    await connectionsEnded;
    await services.stop();
    await store.close();
    log.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));

  const exposedSecret = config.production ? secretInDataDir(config) : null;
  if (exposedSecret) {
    log.warn(
      { secretFile: exposedSecret },
      'the pseudonym secret is kept in DATA_DIR: a copy of DATA_DIR can reverse user keys; give SECRET or a SECRET_FILE outside DATA_DIR',
    );
  }
  await app.ready();
  // a stop that came while the app was made has closed the socket: nothing is handed over
  if (!stopping) await listening.handOver();
  // alerts go out from one node, and only when there is a bot to send them
  stopAlerts = managed?.startAlertSender(managed.bot.api, services.alertChecker, {
    tryLeadership: () => tryLeadership(config.databaseUrl, 'alerts'),
    now: () => new Date(),
    log,
  });
  if (managed?.secret)
    void managed.receiveUpdates(
      managed.bot,
      config,
      { webhookSecret: managed.secret, tryPollingLeadership: () => tryLeadership(config.databaseUrl, 'bot-polling') },
      log,
      botStopped.signal,
    );
  const loss = services.ingestLog?.openLoss;
  if (managed && loss) void managed.tellAdministratorsOfLoss(managed.bot.api, config.adminTelegramIds, loss, log);
  void services.purger.purgeDeletedApps(); // deletions a stop cut short
  services.retention.start(); // now, then hourly: what apps' retention periods keep no longer
  const site = config.publicUrl ?? `http://localhost:${listening.port}`;
  log.info(
    {
      store: store.kind,
      dataDir: store.kind === 'embedded' ? config.dataDir : undefined,
      site,
      envFile: config.envFile,
    },
    `ready: the site is at ${site}. Sign in with Telegram there (the Login Widget needs BotFather's /setdomain for ` +
      `this host), from the management bot (BOT_TOKEN), or with a one-time link from this machine: ` +
      `npm run -s cli -- login-link --telegram-id <your Telegram id>`,
  );
}

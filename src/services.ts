// Wires the domain services over one open store; main, the operator CLI and tests all start here.
import { AlertChecker } from './alerts/checker.ts';
import { AlertSubscriptions } from './alerts/subscriptions.ts';
import type { Config } from './platform/config.ts';
import path from 'node:path';
import { EMBEDDED_DIR } from './db/embedded/layout.ts';
import type { Store } from './db/store.ts';
import { TableMaintenance } from './db/table-maintenance.ts';
import { DataControls } from './events/lifecycle/data-controls.ts';
import { IngestLog } from './events/write/ingest-log.ts';
import type { ProbeOutcome } from './log/probe.ts';
import type { DurableLogLogger } from './log/durable-log.ts';
import { logDirIn } from './events/write/log-dir.ts';
import { lossTotals, unacknowledgedLosses } from './log/losses.ts';
import { ErasureWatch } from './events/lifecycle/erasure-watch.ts';
import { Pseudonymiser } from './events/request/pseudonym.ts';
import { DeletedAppPurger } from './events/lifecycle/deleted-app-purge.ts';
import { DailyQuota } from './events/request/quota.ts';
import { LaunchChecker } from './events/request/launch-check.ts';
import { ReportedBotIds } from './tokens/reported-bot-ids.ts';
import { RefusalLog } from './events/request/refusal-log.ts';
import { RetentionPurger } from './events/lifecycle/retention-purge.ts';
import { StoreHealth } from './events/write/store-health.ts';
import { SqlEventPlane, type EventPlane, type SqlEventPlaneOptions } from './events/write/event-plane.ts';
import { createMetrics, type Metrics } from './platform/metrics.ts';
import { loadSecrets, type Secrets } from './tokens/secret.ts';
import { TokenCache, prismaTokenLoader } from './tokens/cache.ts';
import { TOKEN_FORMAT } from './tokens/format.ts';
import { Makers } from './tokens/makers.ts';
import { Members } from './tokens/members.ts';
import { ReadKeys } from './tokens/read-keys.ts';
import { ServerKeys } from './tokens/server-keys.ts';
import { TokenRegistry } from './tokens/registry.ts';
import { CredentialScreen } from './tokens/screen.ts';
import { ShareLinks } from './tokens/share-links.ts';

export interface Services {
  config: Config;
  store: Store;
  secrets: Secrets;
  events: EventPlane;
  tokens: TokenCache;
  /** refuses made-up tokens before any lookup */
  tokenScreen: CredentialScreen;
  registry: TokenRegistry;
  /** apps' teams: invites, members, transfers */
  members: Members;
  /** per-app keys of the read API */
  readKeys: ReadKeys;
  serverKeys: ServerKeys;
  /** who the bot warns about an app, and about what */
  alertSubscriptions: AlertSubscriptions;
  /** decides which alerts are due; the bot's alert sender asks it on one node */
  alertChecker: AlertChecker;
  /** public read-only links of dashboards */
  shareLinks: ShareLinks;
  /** this node's durable log and its loader; null where nothing is ingested (the operator CLI) */
  ingestLog: IngestLog | null;
  pseudonymiser: Pseudonymiser;
  /** checks the launch data Telegram signed that app-init events carry */
  launchChecker: LaunchChecker;
  /** the bot ids the apps' own bots report with their server keys */
  reportedBotIds: ReportedBotIds;
  rejections: RefusalLog;
  /** events and bytes per app and UTC day */
  quota: DailyQuota;
  /** removes deleted apps' events and rollups; main starts it for apps a stop cut short */
  purger: DeletedAppPurger;
  /** deletes what apps with a retention period keep no longer; main starts it */
  retention: RetentionPurger;
  /** ANALYZE (and VACUUM where no autovacuum runs) of the tables whose changes crossed a threshold; null in the CLI */
  maintenance: TableMaintenance | null;
  /** the owner's retention period and erasing one user's data */
  dataControls: DataControls;
  /** compacts this node's durable log after an erase that ran anywhere; null without a log */
  erasureWatch: ErasureWatch | null;
  metrics: Metrics;
  /** whether the store takes writes, as the loader and a background probe last found: /healthz reads it */
  storeHealth: StoreHealth;
  /**
   * Waits until the store holds every event this node acknowledged (for at most a couple of seconds), so
   * what a user just sent shows in the surfaces that read the store: apps show, the bot, the dashboard.
   */
  caughtUp(): Promise<void>;
  /** flushes what is buffered and stops timers; the store is closed by its owner */
  stop(): Promise<void>;
}

export interface ServicesOptions {
  /** open the durable log and load it (the service); false: the operator CLI, which reads and manages only */
  ingest?: boolean;
  onBackgroundError?: (error: unknown, what?: string) => void;
  /** how the event plane is kept (default: with the insights' aggregates) */
  events?: SqlEventPlaneOptions;
  /** the check of the durable log's file, started while the store opened (probeIngestLog with the config's) */
  logProbed?: Promise<ProbeOutcome>;
  /** the service's logger, for what the durable log says of its file at open */
  logger?: DurableLogLogger;
}

/** the longest a read from a surface waits for the loader (beyond it, it shows what the store has) */
const READ_YOUR_WRITES_MS = 2_000;

/**
 * most bytes of events (their rows) stored by one commit: PGlite's WebAssembly memory grows to its largest
 * statement, and on PostgreSQL larger statements were slower per event (their rollup sorts grow faster than the batch)
 */
const LOAD_BATCH_BYTES = 4 * 1024 ** 2;
/**
 * Under load the loader commits at most about ten times a second: on PGlite a commit's fixed cost (its WAL flush,
 * the statement's start, the log's release) made a half-loaded service spend nearly twice the CPU per event of a
 * fully loaded one. Readers waiting for their writes cut the wait short.
 */
const LOAD_INTERVAL_MS = 100;
/**
 * A small batch waits up to half a second for its commit: for a trickle of events (a small app's traffic) the
 * commit's fixed cost (the event insert's start with all its rollups, the WAL flush) is most of what storing them
 * costs, and a commit per request kept the embedded store's thread several times busier than the events did.
 * Fifty or more single events make a batch worth committing at the usual pace.
 */
const SMALL_BATCH = { bytes: 32 * 1024, waitMs: 500 };
/** how the loader sizes and paces its commits (the ingest bench's record-only reference loads with the same) */
export const LOADER_PACE = {
  maxBatchBytes: LOAD_BATCH_BYTES,
  minCommitIntervalMs: LOAD_INTERVAL_MS,
  smallBatch: SMALL_BATCH,
};

export async function createServices(config: Config, store: Store, options: ServicesOptions = {}): Promise<Services> {
  const onBackgroundError = options.onBackgroundError ?? (() => {});
  const events = new SqlEventPlane(store.sql, { ...options.events, reads: store.reads });
  const metrics = createMetrics();
  if (store.embeddedMemory) metrics.watchEmbeddedMemory(store.embeddedMemory);
  const tokens = new TokenCache(prismaTokenLoader(store.prisma));
  const purger = new DeletedAppPurger(store.sql, onBackgroundError);
  // the service keeps the planner's statistics itself: PGlite runs no autovacuum, and a server's may be off
  const maintenance =
    options.ingest === false
      ? null
      : new TableMaintenance(store.sql, { onError: (error, what) => onBackgroundError(error, what) });
  const storeHealth = new StoreHealth(store.sql, () => ingestLog?.loader.failure ?? null);
  // the log opens (a separate process reads it through first, unless start() had it do so already) while the
  // secrets are read
  const ingestLogOpening: Promise<IngestLog | null> =
    options.ingest === false
      ? Promise.resolve(null)
      : IngestLog.open(config.dataDir, events, {
          maxBytes: config.logMaxBytes,
          minFreeBytes: config.logMinFreeBytes,
          ...LOADER_PACE,
          insights: options.events?.insights !== false,
          embeddedStoreDir: store.kind === 'embedded' ? path.join(config.dataDir, EMBEDDED_DIR) : undefined,
          probed: options.logProbed,
          onError: onBackgroundError,
          logger: options.logger,
          onCommit: (commit) => {
            storeHealth.committed();
            metrics.commitSeconds.observe(commit.seconds);
            metrics.commitEvents.observe(commit.events);
            metrics.eventsStored.inc(commit.inserted);
            maintenance?.changed();
            const now = Date.now();
            for (const appendedAt of commit.appendedAt) metrics.freshnessSeconds.observe((now - appendedAt) / 1000);
          },
        });
  const [secrets, ingestLog] = await Promise.all([loadSecrets(config, store.sql), ingestLogOpening]);
  const tokenScreen = await CredentialScreen.load(store.prisma, secrets, 'token', TOKEN_FORMAT);
  const registry = new TokenRegistry(
    store.prisma,
    secrets,
    (hash) => tokens.invalidate(hash),
    () => void purger.purgeDeletedApps().then(() => maintenance?.changed()),
    { maxAppsPerOwner: config.maxAppsPerOwner },
  );
  if (ingestLog) {
    metrics.watchBacklog(() => ingestLog.stats());
    metrics.watchLosses(() => lossTotals(unacknowledgedLosses(logDirIn(config.dataDir))));
    storeHealth.start();
  }
  // an erase that ran elsewhere (another node, the CLI on a server store) reaches this node's log
  const erasureWatch = ingestLog
    ? new ErasureWatch(
        store.sql,
        () => ingestLog.compact(),
        (error, message) => onBackgroundError(error, message),
      )
    : null;
  erasureWatch?.start();
  const rejections = new RefusalLog(events, 1_000, onBackgroundError);
  rejections.start();
  const quota = new DailyQuota(
    store.sql,
    { eventsPerDay: config.quotaEventsPerDay, bytesPerDay: config.quotaBytesPerDay },
    { onError: onBackgroundError },
  );
  quota.start();
  const pseudonymiser = new Pseudonymiser(secrets);
  const launchChecker = new LaunchChecker({
    publicKeyHex: config.telegramPublicKey,
    testPublicKeyHex: config.telegramTestPublicKey,
    maxAgeSeconds: config.launchMaxAgeSeconds,
    proofOf: (signature) => secrets.hmac('launch-proof', signature.toString('base64url')).subarray(0, 16),
  });
  const alertSubscriptions = new AlertSubscriptions(store.prisma, secrets);
  const makers = new Makers(store.prisma, secrets);
  const readKeys = new ReadKeys(store.prisma, registry, { makers });
  const serverKeys = new ServerKeys(store.prisma, registry, { makers });
  const shareLinks = new ShareLinks(store.prisma, registry, makers);
  const retention = new RetentionPurger(store.sql, (error) => onBackgroundError(error, 'retention purge failed'));
  maintenance?.start();
  // every kind's screen is read now, so no request waits for it
  await Promise.all([readKeys.ready(), serverKeys.ready(), shareLinks.ready()]);
  return {
    config,
    store,
    secrets,
    events,
    tokens,
    tokenScreen,
    registry,
    readKeys,
    serverKeys,
    alertSubscriptions,
    // a removed member's keys are refused at once on this node (other nodes: within the key cache's time)
    members: new Members(store.prisma, registry, secrets, alertSubscriptions, async (revoked) => {
      await Promise.all([
        readKeys.forget(revoked.readKeys),
        serverKeys.forget(revoked.serverKeys),
        shareLinks.forget(revoked.shareLinks),
      ]);
    }),
    alertChecker: new AlertChecker(store.sql, secrets, store.reads),
    shareLinks,
    ingestLog,
    pseudonymiser,
    launchChecker,
    reportedBotIds: new ReportedBotIds(registry, onBackgroundError),
    rejections,
    quota,
    purger,
    retention,
    maintenance,
    dataControls: new DataControls(
      store.prisma,
      store.sql,
      registry,
      pseudonymiser,
      {},
      async () => {
        // through the watch, which then knows this erase's mark is done and does not compact for it again
        await erasureWatch?.check();
      },
      store.reads,
      (message) => onBackgroundError(new Error(message), 'erasing a user left something to the operator'),
    ),
    erasureWatch,
    metrics,
    storeHealth,
    async caughtUp() {
      await ingestLog?.loader.caughtUp(READ_YOUR_WRITES_MS);
    },
    async stop() {
      await erasureWatch?.stop();
      storeHealth.stop();
      await ingestLog?.close();
      await rejections.stop();
      await quota.stop();
      await purger.stop();
      await retention.stop();
      await maintenance?.stop();
    },
  };
}

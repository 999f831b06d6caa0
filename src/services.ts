// Wires the domain services over one open store; main, the operator CLI and tests all start here.
import type { Config } from './config.ts';
import type { Store } from './db/store.ts';
import { Pseudonymiser } from './events/pseudonym.ts';
import { DeletedAppPurger } from './events/purge.ts';
import { RejectionLog } from './events/rejections.ts';
import { SqlEventStore, type EventStore } from './events/store.ts';
import { commitConcurrency, GroupCommitWriter } from './events/writer.ts';
import { createMetrics, type Metrics } from './ingest/metrics.ts';
import { loadSecrets, type Secrets } from './secret.ts';
import { TokenCache, prismaTokenLoader } from './tokens/cache.ts';
import { TokenRegistry } from './tokens/registry.ts';

export interface Services {
  config: Config;
  store: Store;
  secrets: Secrets;
  events: EventStore;
  tokens: TokenCache;
  registry: TokenRegistry;
  writer: GroupCommitWriter;
  pseudonymiser: Pseudonymiser;
  rejections: RejectionLog;
  /** removes deleted apps' events and rollups; main starts it for apps a stop cut short */
  purger: DeletedAppPurger;
  metrics: Metrics;
  /** flushes what is buffered and stops timers; the store is closed by its owner */
  stop(): Promise<void>;
}

export async function createServices(
  config: Config,
  store: Store,
  onBackgroundError: (error: unknown) => void = () => {},
): Promise<Services> {
  const secrets = await loadSecrets(config, store.sql);
  const events = new SqlEventStore(store.sql);
  const metrics = createMetrics();
  const tokens = new TokenCache(prismaTokenLoader(store.prisma));
  const purger = new DeletedAppPurger(store.sql, onBackgroundError);
  const registry = new TokenRegistry(
    store.prisma,
    secrets,
    (hash) => tokens.invalidate(hash),
    () => void purger.purgeDeletedApps(),
  );
  const writer = new GroupCommitWriter(events, {
    concurrency: commitConcurrency(store.kind),
    onCommit: (count, inserted, seconds) => {
      metrics.commitSeconds.observe(seconds);
      metrics.commitEvents.observe(count);
      metrics.eventsStored.inc(inserted);
    },
  });
  const rejections = new RejectionLog(events, 1_000, onBackgroundError);
  rejections.start();
  return {
    config,
    store,
    secrets,
    events,
    tokens,
    registry,
    writer,
    pseudonymiser: new Pseudonymiser(secrets),
    rejections,
    purger,
    metrics,
    async stop() {
      await writer.drained();
      await rejections.stop();
      await purger.stop();
    },
  };
}

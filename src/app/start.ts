// Starts the service: settings, the socket (answering "starting"), the store; the rest of the code loads while the
// store opens, then src/app/serve.ts runs everything the settings ask for.
import { ConfigError, loadConfig, loadEnvFile } from '../platform/config.ts';
import { DataDirBusyError } from '../db/embedded/owner-lock.ts';
import { openStore } from '../db/store.ts';
import { probeIngestLog } from '../events/write/log-dir.ts';
import { listenWhileStarting } from './starting.ts';
import type { ProbeOutcome } from '../log/probe.ts';
import type { ServicesOptions } from '../services.ts';

/** `events`: how the event plane is kept (src/main.ts keeps the defaults; a bench may measure without the insights) */
export async function start(options: Pick<ServicesOptions, 'events'> = {}): Promise<void> {
  const config = loadConfig(process.env, loadEnvFile());
  // listening first: while the store opens and migrations apply, /healthz answers "starting" (from a process of its
  // own, which starts beside the store's opening)
  const listeningOpened = listenWhileStarting({
    port: config.port,
    host: config.host,
    store: config.databaseUrl ? 'server' : 'embedded',
  });
  let logProbed: Promise<ProbeOutcome> | undefined;
  const storeOpening = openStore(config, {
    // the durable log's check (a separate process reading its file through) runs while the store opens; it writes
    // to the log, so only once DATA_DIR is this service's
    whileOpening: () => (logProbed = probeIngestLog(config.dataDir, config.logMaxBytes)),
    clusterTemplate: config.embeddedClusterTemplate,
    onPoolError: (error) => console.error(`database connection lost: ${error.message}`),
    onReadStopped: (ms) =>
      console.warn(`a read outran its time budget: the embedded store's thread was started again (${ms} ms)`),
    onClusterTemplateRefused: (reason) =>
      console.warn(`the prebuilt empty database was not used (${reason}): making a new one, which takes a while`),
  });
  // the rest of the service's code loads while the store opens (the embedded one on a thread of its own), and then the
  // event validator is made, so the first events after the start do not wait for it
  const loading = import('./serve.ts').then(async (module) => {
    (await import('../events/request/validate.ts')).prepareEventValidator();
    return module;
  });
  const [listening, store, { serve }] = await Promise.all([listeningOpened, storeOpening, loading]).catch(
    async (error: unknown) => {
      // a failed start exits at once: not while the check may still be writing to the log
      await logProbed;
      throw error;
    },
  );
  await serve(config, store, listening, { ...options, logProbed });
}

/** start() for a command line: a known failure as one line, then exit 1 */
export function startOrExit(options: Pick<ServicesOptions, 'events'> = {}): void {
  start(options).catch((error: unknown) => {
    const known = error instanceof ConfigError || error instanceof DataDirBusyError;
    console.error(known ? `cannot start: ${(error as Error).message}` : error);
    process.exit(1);
  });
}

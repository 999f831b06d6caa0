// One run of the operator CLI from its arguments and settings to what it prints and its exit code, exactly as
// the process prints them: through the service that owns the embedded store, or on a store opened here. Only the
// socket client, the settings and the owner lock load at once: the store and the commands' modules load when this
// process runs a command itself, so a command the running service answers starts quickly.
import { ConfigError, loadConfig, type Config } from '../platform/config.ts';
import { DataDirBusyError, liveOwner } from '../db/embedded/owner-lock.ts';
import type { Services } from '../services.ts';
import type { CommandResult } from './command-result.ts';
import { OwnerRefusedError, runThroughOwner } from './owner-client.ts';
import { helpAnswer } from './usage.ts';

/** another CLI command holds the embedded store for a moment: wait for it this long */
const WAIT_FOR_OTHER_COMMAND_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** where a run's command executes: the store its settings name (as the process does), or services already open */
export type CliTarget = { env: Record<string, string | undefined> } | { services: Services };

/** The embedded store: through the running service that owns it, or opened here once nobody does. */
async function executeEmbedded(config: Config, argv: string[]): Promise<CommandResult> {
  const deadline = Date.now() + WAIT_FOR_OTHER_COMMAND_MS;
  for (;;) {
    const owner = await liveOwner(config.dataDir);
    try {
      if (owner) return await runThroughOwner(owner.controlSocket, argv);
      return await executeHere(config, argv);
    } catch (error) {
      // the owner is another CLI command (it serves no socket) or took the store just now
      const code = (error as NodeJS.ErrnoException).code;
      const busy = error instanceof DataDirBusyError || code === 'ENOENT' || code === 'ECONNREFUSED';
      if (!busy || Date.now() > deadline) throw error;
      await sleep(250);
    }
  }
}

async function executeHere(config: Config, argv: string[]): Promise<CommandResult> {
  const [{ openStore }, { createServices }, { runCommand }] = await Promise.all([
    import('../db/store.ts'),
    import('../services.ts'),
    import('./commands.ts'),
  ]);
  const store = await openStore(config);
  try {
    const services = await createServices(config, store, { ingest: false });
    try {
      return await runCommand(services, argv);
    } finally {
      await services.stop();
    }
  } finally {
    await store.close();
  }
}

async function execute(argv: string[], target: CliTarget): Promise<CommandResult> {
  const help = helpAnswer(argv);
  if (help) return help;
  if ('services' in target) return (await import('./commands.ts')).runCommand(target.services, argv);
  const config = loadConfig(target.env);
  return config.databaseUrl ? executeHere(config, argv) : executeEmbedded(config, argv);
}

/** Runs one CLI command; a setting or store the command cannot use is a one-line message (JSON with --json), exit 1. */
export async function runCli(argv: string[], target: CliTarget): Promise<CommandResult> {
  try {
    return await execute(argv, target);
  } catch (error) {
    const known =
      error instanceof ConfigError || error instanceof DataDirBusyError || error instanceof OwnerRefusedError;
    if (known && argv.includes('--json'))
      return { exitCode: 1, stdout: `${JSON.stringify({ error: (error as Error).message })}\n`, stderr: '' };
    return { exitCode: 1, stdout: '', stderr: `${known ? (error as Error).message : (error as Error).stack}\n` };
  }
}

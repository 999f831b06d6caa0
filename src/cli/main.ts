// Operator CLI entry: runs a command through the service that owns the embedded store, or opens the
// store itself (PostgreSQL, or embedded when no service is running). Only the socket client, the settings and the
// owner lock load at once: the store and the commands' modules load when this process runs a command itself.
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { DataDirBusyError, liveOwner } from '../db/owner-lock.ts';
import type { CommandResult } from './commands.ts';
import { runThroughOwner } from './control-socket.ts';
import { helpAnswer } from './usage.ts';

/** another CLI command holds the embedded store for a moment: wait for it this long */
const WAIT_FOR_OTHER_COMMAND_MS = 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The embedded store: through the running service that owns it, or opened here once nobody does. */
async function executeEmbedded(config: Config, argv: string[]): Promise<CommandResult> {
  const deadline = Date.now() + WAIT_FOR_OTHER_COMMAND_MS;
  for (;;) {
    const owner = liveOwner(config.dataDir);
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

async function execute(argv: string[]): Promise<CommandResult> {
  const help = helpAnswer(argv);
  if (help) return help;
  const config = loadConfig();
  return config.databaseUrl ? executeHere(config, argv) : executeEmbedded(config, argv);
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

// a reader that stops early (`| head`) closes the pipe: stop quietly, as Unix tools do, instead of
// dying on an unhandled EPIPE with a stack trace
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

try {
  const result = await execute(process.argv.slice(2));
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.exitCode;
} catch (error) {
  const known = error instanceof ConfigError || error instanceof DataDirBusyError;
  if (known && process.argv.includes('--json'))
    process.stdout.write(`${JSON.stringify({ error: (error as Error).message })}\n`);
  else process.stderr.write(`${known ? (error as Error).message : (error as Error).stack}\n`);
  process.exitCode = 1;
}

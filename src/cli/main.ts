// Operator CLI entry: runs a command through the service that owns the embedded store, or opens the
// store itself (PostgreSQL, or embedded when no service is running).
import { ConfigError, loadConfig } from '../config.ts';
import { DataDirBusyError, liveOwner } from '../db/owner-lock.ts';
import { openStore } from '../db/store.ts';
import { createServices } from '../services.ts';
import { runCommand, type CommandResult } from './commands.ts';
import { runThroughOwner } from './control-socket.ts';

async function execute(argv: string[]): Promise<CommandResult> {
  const config = loadConfig();
  if (!config.databaseUrl) {
    const owner = liveOwner(config.dataDir);
    if (owner) return runThroughOwner(owner.controlSocket, argv);
  }
  const store = await openStore(config);
  try {
    const services = await createServices(config, store);
    try {
      return await runCommand(services, argv);
    } finally {
      await services.stop();
    }
  } finally {
    await store.close();
  }
}

try {
  const result = await execute(process.argv.slice(2));
  process.stdout.write(result.stdout);
  process.stderr.write(result.stderr);
  process.exitCode = result.exitCode;
} catch (error) {
  const known = error instanceof ConfigError || error instanceof DataDirBusyError;
  process.stderr.write(`${known ? (error as Error).message : (error as Error).stack}\n`);
  process.exitCode = 1;
}

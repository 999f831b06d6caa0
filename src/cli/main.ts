// Operator CLI entry: prints what the run of its arguments (run.ts) prints and exits with its code.
import '../platform/stack-traces.ts';
import { ConfigError, loadEnvFile } from '../platform/config.ts';
import type { CommandResult } from './command-result.ts';
import { runCli } from './run.ts';

// a reader that stops early (`| head`) closes the pipe: stop quietly, as Unix tools do, instead of
// dying on an unhandled EPIPE with a stack trace
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

// the service's settings, from a .env file in the working directory too (the environment wins)
let result: CommandResult;
try {
  loadEnvFile();
  result = await runCli(process.argv.slice(2), { env: process.env });
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  result = { exitCode: 1, stdout: '', stderr: `${error.message}\n` };
}
process.stdout.write(result.stdout);
process.stderr.write(result.stderr);
process.exitCode = result.exitCode;

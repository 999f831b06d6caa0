// Operator CLI entry: prints what the run of its arguments (run.ts) prints and exits with its code.
import '../stack-traces.ts';
import { runCli } from './run.ts';

// a reader that stops early (`| head`) closes the pipe: stop quietly, as Unix tools do, instead of
// dying on an unhandled EPIPE with a stack trace
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(process.exitCode ?? 0);
  });
}

const result = await runCli(process.argv.slice(2), { env: process.env });
process.stdout.write(result.stdout);
process.stderr.write(result.stderr);
process.exitCode = result.exitCode;

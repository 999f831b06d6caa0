// The operator CLI run in the test process (src/cli/run.ts: what `npm run -s cli` prints and its exit code), on a
// test service's services or on the store its settings name, with the JSON it prints parsed when asked for.
import { expect } from 'vitest';
import type { CommandResult } from '../../src/cli/command-result.ts';
import { runCli as run } from '../../src/cli/run.ts';
import type { TestService } from './service.ts';

export type { CommandResult } from '../../src/cli/command-result.ts';

/** one command on the test service's services (the store its process owns) */
export async function runCli(service: TestService, ...argv: string[]) {
  const result = await run(argv, { services: service.services });
  return { ...result, json: argv.includes('--json') && result.stdout ? JSON.parse(result.stdout) : undefined };
}

/**
 * One command with the given settings, as the process runs it: on the PostgreSQL database they name, through the
 * service process that owns the embedded store, or on the embedded store opened here when nobody owns it.
 */
export function runCliWith(env: Record<string, string>, argv: string[]): Promise<CommandResult> {
  return run(argv, { env: { LOG_LEVEL: 'warn', ...env } });
}

/** exit code 0 and exactly one JSON document on stdout, parsed */
export function json(result: CommandResult) {
  expect(result.exitCode, result.stderr).toBe(0);
  expect(result.stdout.trim().split('\n')).toHaveLength(1); // one JSON document and nothing else
  return JSON.parse(result.stdout);
}

/** a hang guard for a suite's start: a fresh embedded store (initdb and migrations in WebAssembly) on a loaded machine */
export const START_TIMEOUT_MS = 600_000;

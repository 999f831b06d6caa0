// The operator CLI's commands run in process against a test service, with the JSON they print parsed when asked for.
import { runCommand } from '../../src/cli/commands.ts';
import type { TestService } from './service.ts';

export async function runCli(service: TestService, ...argv: string[]) {
  const result = await runCommand(service.services, argv);
  return { ...result, json: argv.includes('--json') ? JSON.parse(result.stdout) : undefined };
}

// The operator's route on the running service's unix socket (src/app/operator-socket.ts): POST /run with the CLI's
// arguments runs one command inside the process that owns the embedded store (a second process must never open
// PGlite's data directory), and answers what it printed and its exit code.
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../platform/http-error.ts';
import type { Services } from '../services.ts';
import type { CommandResult } from './command-result.ts';

/** the one request the CLI sends (src/cli/owner-client.ts) */
export const RUN_PATH = '/run';

const RUN_BODY = {
  type: 'object',
  required: ['argv'],
  additionalProperties: false,
  // no bound of its own: the socket's body limit bounds it, as the shell bounds a command run in place
  properties: { argv: { type: 'array', items: { type: 'string' } } },
} as const;

export async function operatorRoutes(app: FastifyInstance, options: { services: Services }): Promise<void> {
  // imported here: the CLI's client must not load the commands' modules, and the service only once it listens
  const { runCommand } = await import('./commands.ts');
  app.post<{ Body: { argv: string[] } }>(RUN_PATH, { schema: { body: RUN_BODY } }, async (request) => {
    try {
      return await runCommand(options.services, request.body.argv);
    } catch (error) {
      return { exitCode: 1, stdout: '', stderr: `${(error as Error).message}\n` } satisfies CommandResult;
    }
  });
  // another method on the path: said plainly, and nothing runs
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: RUN_PATH,
    handler: async () => {
      throw new HttpError(405, { message: `Only POST ${RUN_PATH}.` });
    },
  });
}

// The operator's socket: a unix socket in DATA_DIR, readable by the service's user only, on which a small Fastify app
// with the service's error answers serves the CLI's route (src/cli/operator-routes.ts) while the service owns the
// embedded store.
import fs from 'node:fs';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { operatorRoutes } from '../cli/operator-routes.ts';
import type { Services } from '../services.ts';
import { answerErrors } from './errors.ts';

const MAX_REQUEST_BYTES = 64 * 1024;

/**
 * listens on socketPath; resolves with what stops it: at once, a command in flight cut off (its connection closed),
 * so a stop never waits for an operator's long command. log: the service's logger, for an unexpected failure
 */
export async function startOperatorSocket(
  socketPath: string,
  services: Services,
  log?: FastifyBaseLogger,
): Promise<() => Promise<void>> {
  const app = Fastify({
    bodyLimit: MAX_REQUEST_BYTES,
    forceCloseConnections: true,
    disableRequestLogging: true,
    ...(log ? { loggerInstance: log } : {}),
    // the request is taken as sent: nothing coerced into a string, no unknown field dropped in silence
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false } },
  });
  answerErrors(app, MAX_REQUEST_BYTES);
  await app.register(operatorRoutes, { services });
  fs.rmSync(socketPath, { force: true }); // left by a killed owner
  await app.listen({ path: socketPath });
  fs.chmodSync(socketPath, 0o600);
  return async () => {
    await app.close();
    fs.rmSync(socketPath, { force: true });
  };
}

// The service's logger (pino, which Fastify logs through): made before the services, so that what they report while
// the service starts (a damaged durable log, say) has somewhere to go, and handed to the HTTP app.
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';

/** pino's logger, as the HTTP app's routes see it */
export type ServiceLogger = FastifyBaseLogger;

export function serviceLogger(level: string): ServiceLogger {
  return pino({
    level,
    // client IPs and token values never reach the logs
    serializers: {
      req: (request: { method: string; url: string }) => ({ method: request.method, url: request.url.split('?')[0] }),
    },
    redact: ['req.headers', 'headers'],
  });
}

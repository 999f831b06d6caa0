// How the service answers every error, for ingestion, the read API and the site alike: the HTTP errors routes throw,
// the registry's refusals, reads past their budget, unknown paths, Fastify's own refusals, and failures.
import type { FastifyError, FastifyInstance } from 'fastify';
import { ReadBudgetError } from '../db/read-budget.ts';
import { errorSummary } from '../platform/error-summary.ts';
import { HttpError } from '../platform/http-error.ts';
import { refusalError, tooLarge } from '../ingest/http-error.ts';
import { RegistryError } from '../tokens/registry.ts';

/** the status of each refusal of the registry (apps, domains, teams, keys) */
const REGISTRY_STATUS: Record<RegistryError['code'], number> = {
  app_exists: 409,
  app_not_found: 404,
  domain_exists: 409,
  domain_not_found: 404,
  last_domain: 409,
  not_allowed: 403,
  forbidden: 403,
  invite_not_found: 404,
  invite_used: 410,
  invite_expired: 410,
  member_not_found: 404,
  own_app: 409,
  team_changed: 409,
  key_not_found: 404,
  key_ambiguous: 409,
  key_revoked: 409,
  key_limit: 409,
  app_limit: 409,
};

function fastifyErrorAnswer(error: FastifyError, maxBodyBytes: number): HttpError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge(maxBodyBytes);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return refusalError('contentTypeUnsupported');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return refusalError('contentLengthMismatch');
  }
  return null;
}

/** set on the root before any route is added: routes keep the handlers in force when they are registered */
export function answerErrors(app: FastifyInstance, maxBodyBytes: number): void {
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ message: `No route ${request.method} ${request.url.split('?')[0]}.` });
  });

  app.setErrorHandler((error: FastifyError | HttpError | RegistryError, request, reply) => {
    const isEvents = request.routeOptions.url === '/events';
    let answer = error instanceof HttpError ? error : fastifyErrorAnswer(error, maxBodyBytes);
    if (!answer && error instanceof RegistryError)
      answer = new HttpError(REGISTRY_STATUS[error.code], { message: error.message });
    // a read past its time budget: the store is busy, not broken
    if (!answer && error instanceof ReadBudgetError) answer = new HttpError(503, { message: error.message });
    const status = (error as FastifyError).statusCode;
    if (!answer && status && status >= 400 && status < 500) answer = new HttpError(status, { message: error.message });
    if (!answer) {
      // a summary and the top frames: whole errors (Prisma's carry kilobytes of code frames) logged for
      // every request of an outage would flood the log and the heap
      const frames = (error.stack ?? '')
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line.startsWith('at '))
        .slice(0, 5);
      request.log.error({ failure: errorSummary(error), frames }, 'unexpected error');
      // docs/spec.md §7: a server problem on /events is "400 Failed to record"
      answer = isEvents
        ? refusalError('failedToRecord')
        : new HttpError(500, { message: 'Something went wrong. Please try again.' });
    }
    reply.code(answer.statusCode).send(answer.body);
  });
}

// How the service answers what no route answered itself: unknown paths, Fastify's own refusals, and failures.
import type { FastifyError, FastifyInstance } from 'fastify';
import { ReadBudgetError } from '../db/read-budget.ts';
import { HttpError, refusalError, tooLarge } from '../ingest/http-error.ts';
import { errorSummary } from '../error-summary.ts';

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

  app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
    const isEvents = request.routeOptions.url === '/events';
    let answer = error instanceof HttpError ? error : fastifyErrorAnswer(error, maxBodyBytes);
    // a read past its time budget: the store is busy, not broken
    if (!answer && error instanceof ReadBudgetError) answer = new HttpError(503, { message: error.message });
    if (!answer && error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      answer = new HttpError(error.statusCode, { message: error.message });
    }
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
      answer = isEvents ? refusalError('failedToRecord') : new HttpError(500, { message: 'Internal error.' });
    }
    reply.code(answer.statusCode).send(answer.body);
  });
}

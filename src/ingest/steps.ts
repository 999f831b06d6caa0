// The /events pipeline steps after "decode": validate → authorise → limit → buffer → commit.
// Each step either passes the request on or throws the spec's HttpError.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GroupCommitWriter } from '../events/writer.ts';
import { normaliseEvent } from '../events/normalise.ts';
import type { Pseudonymiser } from '../events/pseudonym.ts';
import type { RejectionLog } from '../events/rejections.ts';
import type { EventRow } from '../events/store.ts';
import { checkBody, type RawEvent } from '../events/validate.ts';
import type { TokenCache, TokenGrant } from '../tokens/cache.ts';
import { isWellFormedToken } from '../tokens/format.ts';
import { HttpError, MESSAGES, validationError } from './http-error.ts';
import { describeOrigin, requestOrigin } from './request-origin.ts';

declare module 'fastify' {
  interface FastifyRequest {
    ingest: { events: RawEvent[]; grant: TokenGrant | null; token: string };
  }
}

export interface StepServices {
  maxEventsPerRequest: number;
  tokens: TokenCache;
  writer: GroupCommitWriter;
  pseudonymiser: Pseudonymiser;
  rejections: RejectionLog;
}

/**
 * What a log line says about a failure (mostly the store's): its type, code and the last line of its message.
 * Prisma's errors carry tens of kilobytes of code frames in message and stack; logged whole for every request
 * while the store is down they made the process grow by ~50 MB/s (measured: 2.1 GB after a 40 s outage).
 */
export function errorSummary(error: unknown): { type: string; code?: unknown; message: string } {
  const lines = String((error as Error | undefined)?.message ?? error).split('\n').map((line) => line.trim()).filter(Boolean);
  return {
    type: (error as object | null)?.constructor?.name ?? typeof error,
    code: (error as { code?: unknown } | null)?.code,
    message: (lines.at(-1) ?? '').slice(0, 300),
  };
}

/** the spec's header first, then the official client's */
export function tokenHeader(request: FastifyRequest): string | undefined {
  const value = request.headers['analytics-auth-token'] ?? request.headers['tga-auth-token'];
  return typeof value === 'string' ? value.trim() : undefined;
}

export function createSteps(services: StepServices) {
  const reject = (request: FastifyRequest, grant: TokenGrant | null, error: HttpError): HttpError => {
    if (grant) services.rejections.record(grant.appId, error.statusCode, error.message, describeOrigin(request));
    return error;
  };

  /** validate: the body is one event or 1..max events, each matching the schema */
  async function validate(request: FastifyRequest): Promise<void> {
    const checked = checkBody(request.body, services.maxEventsPerRequest);
    if (!checked.ok) {
      // a broken integration should still show up for its owner
      const token = tokenHeader(request);
      const grant = isWellFormedToken(token) ? await services.tokens.lookup(token).catch(() => null) : null;
      throw reject(request, grant, validationError(checked.errors));
    }
    request.ingest = { events: checked.events, grant: null, token: '' };
  }

  /** authorise: a live token, the app_name it was issued for, a request from one of its domains */
  async function authorise(request: FastifyRequest): Promise<void> {
    const token = tokenHeader(request);
    if (!isWellFormedToken(token)) throw new HttpError(400, { message: MESSAGES.tokenMissing });
    let grant: TokenGrant | null;
    try {
      grant = await services.tokens.lookup(token);
    } catch (error) {
      request.log.error({ failure: errorSummary(error) }, 'token lookup failed');
      throw new HttpError(400, { message: MESSAGES.failedToRecord });
    }
    if (!grant || !grant.active) throw reject(request, grant, new HttpError(400, { message: MESSAGES.tokenInvalid }));
    if (request.ingest.events.some((event) => event.app_name !== grant.appName)) {
      throw reject(request, grant, new HttpError(400, { message: MESSAGES.appNameInvalid }));
    }
    const origin = requestOrigin(request);
    if (!origin || !grant.domains.includes(origin.host)) {
      throw reject(request, grant, new HttpError(403, { message: MESSAGES.domainMismatch }));
    }
    request.ingest.grant = grant;
    request.ingest.token = token;
  }

  /** limit: answer for the rate limiter's refusal, attributed to the app */
  function tooManyRequests(request: FastifyRequest): HttpError {
    return reject(request, request.ingest?.grant ?? null, new HttpError(429, { message: MESSAGES.tooManyRequests }));
  }

  /** buffer → commit: hand the events to the group-commit writer and answer once they are durable */
  async function record(request: FastifyRequest, reply: FastifyReply): Promise<{ message: string }> {
    const grant = request.ingest.grant!;
    const appId = grant.appId;
    const receivedAt = new Date();
    const { events } = request.ingest;
    const rows: EventRow[] = new Array(events.length);
    // a batch is usually one user's (the official client sends a session's events): one keyed hash per
    // user and request. Kept for this request only, so no raw user id outlives it in memory.
    let lastUserId: number | undefined;
    let lastUserKey: Buffer | undefined;
    let bytes = 0;
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      const serialised = JSON.stringify(event);
      bytes += serialised.length;
      const normalised = normaliseEvent(event, serialised, receivedAt);
      if (lastUserKey === undefined || !Object.is(normalised.userId, lastUserId)) {
        lastUserId = normalised.userId;
        lastUserKey = services.pseudonymiser.userKey(appId, normalised.userId);
      }
      // spelt out rather than spread: this runs for every event
      rows[i] = {
        appId,
        eventKey: services.pseudonymiser.eventKey(appId, serialised, normalised.sentAt),
        userKey: lastUserKey,
        receivedAt,
        eventName: normalised.eventName,
        sessionId: normalised.sessionId,
        isPremium: normalised.isPremium,
        isSuccess: normalised.isSuccess,
        platform: normalised.platform,
        locale: normalised.locale,
        startParam: normalised.startParam,
        occurredAt: normalised.occurredAt,
        day: normalised.day,
        props: normalised.props,
      };
    }
    try {
      await services.writer.submit(rows, bytes);
    } catch (error) {
      request.log.error({ failure: errorSummary(error), cause: errorSummary((error as { cause?: unknown }).cause ?? error) }, 'events not recorded');
      throw reject(request, grant, new HttpError(400, { message: MESSAGES.failedToRecord }));
    }
    reply.code(201);
    return { message: MESSAGES.success };
  }

  return { validate, authorise, tooManyRequests, record };
}

// The /events pipeline steps: screen (before the body is read), then after "decode": validate → authorise →
// limit → launches (Telegram's signed launch data checked, then forgotten) → daily quota → record (append to the
// durable log). Each step passes the request on or refuses it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IngestLog } from '../events/write/ingest-log.ts';
import type { Pseudonymiser } from '../events/request/pseudonym.ts';
import type { DailyQuota } from '../events/request/quota.ts';
import { REFUSALS, SUCCESS_MESSAGE } from '../events/request/refusals.ts';
import type { RefusalLog } from '../events/request/refusal-log.ts';
import { eventRows } from '../events/request/rows.ts';
import { RepeatedFailures } from './repeated-failures.ts';
import { errorSummary } from '../platform/error-summary.ts';
import { checkBody, type RawEvent } from '../events/request/validate.ts';
import type { TokenCache, TokenGrant } from '../tokens/cache.ts';
import type { CredentialScreen } from '../tokens/screen.ts';
import { isServerEvent } from '../events/request/names.ts';
import { SERVER_KEY_PREFIX, type ServerKeys } from '../tokens/server-keys.ts';
import { bearerCredential, isWellFormedToken } from '../tokens/format.ts';
import type { HttpError } from '../platform/http-error.ts';
import { LAUNCH_PROOF_FIELDS, type LaunchChecker, type LaunchVerdict } from '../events/request/launch-check.ts';
import { RefusalError, refusalError, validationError } from './http-error.ts';
import { describeOrigin, requestOrigin } from './request-origin.ts';

/** what the /events pipeline knows of a request so far */
export interface IngestState {
  events: RawEvent[];
  grant: TokenGrant | null;
  token: string;
  /** set instead of token when the request came with a server key (Authorization: Bearer tma_server_…) */
  serverKey?: string;
  serialised?: string[];
  /** the verdict on each app-init's launch data, by the event's place (src/events/request/launch-check.ts) */
  launches?: (LaunchVerdict | undefined)[];
}

declare module 'fastify' {
  interface FastifyRequest {
    /** set by the pipeline's first step (null before it, and on other routes) */
    ingest: IngestState | null;
  }
}

export interface StepServices {
  maxEventsPerRequest: number;
  tokens: TokenCache;
  tokenScreen: CredentialScreen;
  serverKeys: Pick<ServerKeys, 'authenticate' | 'mayBeIssued'>;
  ingestLog: IngestLog;
  pseudonymiser: Pseudonymiser;
  rejections: RefusalLog;
  quota: DailyQuota;
  launchChecker: Pick<LaunchChecker, 'check'>;
  /** the bot id a server key's bot reported, for its app (kept when the app has none) */
  reportBotId(appId: number, botId: string): void;
}

/**
 * the header the integrator's bot sends its numeric id in beside a server key's events (the grammY middleware's
 * BOT_ID_HEADER); ignored with a token
 */
export const BOT_ID_HEADER = 'tma-bot-id';
const BOT_ID_VALUE = /^[1-9][0-9]{0,15}$/;

/** the headers a token comes in: the spec's first, then the official client's */
export const TOKEN_HEADERS = ['analytics-auth-token', 'tga-auth-token'] as const;

export function tokenHeader(request: FastifyRequest): string | undefined {
  const value = request.headers[TOKEN_HEADERS[0]] ?? request.headers[TOKEN_HEADERS[1]];
  return typeof value === 'string' ? value.trim() : undefined;
}

/**
 * A server key from `Authorization: Bearer tma_server_…`, the header the integrator's bot or backend sends; undefined
 * when there is none (other Authorization values are not ours and are ignored). Browsers cannot send it: the CORS
 * preflight does not allow the header, so a page keeps using its public token.
 */
export function serverKeyHeader(request: FastifyRequest): string | undefined {
  const key = bearerCredential(request.headers.authorization);
  return key?.startsWith(SERVER_KEY_PREFIX) ? key : undefined;
}

/** what identifies the client's credential, for the rate limit: the server key, else the token header */
export function credentialOf(request: FastifyRequest): string | undefined {
  return serverKeyHeader(request) ?? tokenHeader(request);
}

const TOKEN_MISSING = { message: REFUSALS.tokenMissing.message };
const TOKEN_INVALID = { message: REFUSALS.tokenInvalid.message };

export function createSteps(services: StepServices) {
  const notRecorded = new RepeatedFailures();
  const reject = (
    request: FastifyRequest,
    grant: TokenGrant | null,
    error: HttpError,
    reason: string | null = null,
  ): HttpError => {
    if (grant && error instanceof RefusalError)
      services.rejections.record(grant.appId, error.refusal, describeOrigin(request), reason);
    return error;
  };

  /**
   * screen: before the body is read, a token header that is missing, malformed or certainly not issued
   * here is refused, and so is a server key certainly not issued here; such requests cost no store lookup and no
   * body parsing (a flood of made-up tokens or keys cannot crowd out real ingestion)
   */
  async function screen(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const serverKey = serverKeyHeader(request);
    if (serverKey !== undefined) {
      if (!(await services.serverKeys.mayBeIssued(serverKey)))
        return void reply.code(REFUSALS.tokenInvalid.status).send(TOKEN_INVALID);
      request.ingest = { events: [], grant: null, token: '', serverKey };
      return;
    }
    const token = tokenHeader(request);
    // answered here rather than thrown: the cheapest refusal Fastify has (no error object, no error handler)
    if (!isWellFormedToken(token)) return void reply.code(REFUSALS.tokenMissing.status).send(TOKEN_MISSING);
    if (!services.tokenScreen.mayBeIssued(token))
      return void reply.code(REFUSALS.tokenInvalid.status).send(TOKEN_INVALID);
    request.ingest = { events: [], grant: null, token };
  }

  /** validate: the body is one event or 1..max events, each matching the schema */
  async function validate(request: FastifyRequest): Promise<void> {
    const checked = checkBody(request.body, services.maxEventsPerRequest);
    if (!checked.ok) {
      // a broken integration should still show up for its owner
      const grant = await lookup(request.ingest!).catch(() => null);
      throw reject(request, grant, validationError(checked.errors));
    }
    request.ingest!.events = checked.events;
  }

  /** the grant of the request's server key (which has no domains: it is used without an Origin) or token */
  async function lookup(state: IngestState): Promise<TokenGrant | null> {
    if (state.serverKey === undefined) return services.tokens.lookup(state.token);
    const keyGrant = await services.serverKeys.authenticate(state.serverKey);
    return keyGrant && { ...keyGrant, domains: [], botId: null, active: true };
  }

  /**
   * authorise: a live token (screened), the app_name it was issued for, a request from one of its domains; or a live
   * server key and its app's app_name, from anywhere. Server events come only with a server key.
   */
  async function authorise(request: FastifyRequest): Promise<void> {
    const { serverKey, events } = request.ingest!;
    let grant: TokenGrant | null;
    try {
      grant = await lookup(request.ingest!);
    } catch (error) {
      request.log.error({ failure: errorSummary(error) }, 'token lookup failed');
      throw refusalError('failedToRecord');
    }
    if (!grant || !grant.active) throw reject(request, grant, refusalError('tokenInvalid'));
    if (request.ingest!.events.some((event) => event.app_name !== grant.appName)) {
      throw reject(request, grant, refusalError('appNameInvalid'));
    }
    if (serverKey === undefined) {
      const errors = events.flatMap((event, index) =>
        isServerEvent(event.event_name as string)
          ? [`events[${index}].event_name "${event.event_name}" is accepted only with a server key`]
          : [],
      );
      if (errors.length > 0) throw reject(request, grant, validationError(errors));
    }
    const origin = requestOrigin(request);
    if (serverKey === undefined && (!origin || !grant.domains.includes(origin.host))) {
      throw reject(request, grant, refusalError('domainMismatch'));
    }
    request.ingest!.grant = grant;
    const botId = request.headers[BOT_ID_HEADER];
    if (serverKey !== undefined && typeof botId === 'string' && BOT_ID_VALUE.test(botId))
      services.reportBotId(grant.appId, botId);
  }

  /** limit: answer for the rate limiter's refusal, attributed to the app */
  function tooManyRequests(request: FastifyRequest): HttpError {
    return reject(request, request.ingest?.grant ?? null, refusalError('rateLimited'));
  }

  /**
   * launches: each app-init's launch data is checked against the app's bot and the event's user, and every event's
   * launch data is taken out, so nothing past this step (the log, the store, a log line) holds it. Whatever the
   * verdict, the request goes on as before. A server key's events are the integrator's word: never checked.
   */
  async function checkLaunches(request: FastifyRequest): Promise<void> {
    const state = request.ingest!;
    const { events, grant } = state;
    const checks: (Promise<LaunchVerdict> | undefined)[] = new Array(events.length);
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      if (state.serverKey === undefined && event.event_name === 'app-init')
        checks[i] = services.launchChecker.check(event, grant!.botId, String(event.user_id));
    }
    // read by the checks above before they first waited: the launch data goes now
    for (const event of events) for (const field of LAUNCH_PROOF_FIELDS) delete event[field];
    state.launches = checks.some(Boolean) ? await Promise.all(checks) : [];
  }

  /** quota: the app stays within its events and bytes per UTC day (src/events/request/quota.ts); 429 until the next day */
  async function dailyQuota(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const { events, grant } = request.ingest!;
    // serialised once: the bytes counted here are the ones record() hashes and stores
    const serialised = events.map((event) => JSON.stringify(event));
    let bytes = 0;
    for (const text of serialised) bytes += text.length;
    const refusal = await services.quota.admit(grant!.appId, events.length, bytes);
    if (refusal) {
      reply.header('retry-after', String(refusal.retryAfterSeconds));
      throw reject(request, grant, refusalError(refusal.code), refusal.reason);
    }
    request.ingest!.serialised = serialised;
  }

  /** record: append the events to the durable log and answer once they are on disk (the loader stores them) */
  async function record(request: FastifyRequest, reply: FastifyReply): Promise<{ message: string }> {
    const grant = request.ingest!.grant!;
    const appId = grant.appId;
    const receivedAt = new Date();
    const { events, serialised, launches, serverKey } = request.ingest!;
    const { rows, bytes } = eventRows(appId, events, receivedAt, services.pseudonymiser, serialised, {
      launches,
      sentByServer: serverKey !== undefined,
    });
    try {
      await services.ingestLog.append(rows, bytes);
    } catch (error) {
      const failure = errorSummary(error);
      // a full disk refuses every request: one line a minute says how many were refused since
      const refused = notRecorded.note(
        `${failure.type} ${String((error as { reason?: unknown }).reason ?? failure.code)}`,
      );
      if (refused !== null)
        request.log.error(
          { failure, cause: errorSummary((error as { cause?: unknown }).cause ?? error), refused },
          refused === 1
            ? 'events not recorded'
            : `events not recorded: ${refused} requests refused for this since the last line`,
        );
      throw reject(request, grant, refusalError('failedToRecord'));
    }
    reply.code(201);
    return { message: SUCCESS_MESSAGE };
  }

  return { screen, validate, authorise, tooManyRequests, checkLaunches, dailyQuota, record };
}

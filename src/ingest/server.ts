// The HTTP service: CORS, the /events pipeline, the SDK script, the site, health, metrics, OpenAPI.
import cors from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import Fastify, { LogController, type FastifyError, type FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { Services } from '../services.ts';
import { registerDecoder, tooLarge } from './decode.ts';
import { HttpError, MESSAGES } from './http-error.ts';
import { openApiDocument } from './openapi.ts';
import { registerSdkScript } from './sdk-script.ts';
import { createSteps, errorSummary, tokenHeader } from './steps.ts';
import { registerCatalogRoutes } from '../ranking/routes.ts';
import { registerSite, type SiteOptions } from '../site/index.ts';

export const TOKEN_HEADERS = ['analytics-auth-token', 'tga-auth-token'];

function fastifyErrorAnswer(error: FastifyError, maxBodyBytes: number): HttpError | null {
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return tooLarge(maxBodyBytes);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new HttpError(415, { message: 'Content-Type must be application/json.' });
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new HttpError(400, { message: 'The body does not match its Content-Length.' });
  }
  return null;
}

export interface ServerOptions {
  site?: SiteOptions;
}

export async function buildServer(services: Services, options: ServerOptions = {}): Promise<FastifyInstance> {
  const { config, metrics } = services;
  const app = Fastify({
    // a hop count is supported by Fastify (proxy-addr) but missing from its types
    trustProxy: config.trustProxy as boolean | string | string[],
    bodyLimit: config.maxBodyBytes,
    requestTimeout: 30_000,
    // while stopping, a request that arrives on a kept-alive connection is still served (with
    // "Connection: close"): the spec has no 503, and the store is open until every request is answered
    return503OnClosing: false,
    // per-request lines go out at debug level from the onResponse hook below, without client IPs
    logController: new LogController({ disableRequestLogging: true }),
    logger: {
      level: config.logLevel,
      // client IPs and token values never reach the logs
      serializers: { req: (request) => ({ method: request.method, url: request.url.split('?')[0] }) },
      redact: ['req.headers', 'headers'],
    },
  });

  // set before any route is added: routes keep the error handler in force when they are registered
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send({ message: `No route ${request.method} ${request.url.split('?')[0]}.` });
  });

  app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
    const isEvents = request.routeOptions.url === '/events';
    let answer = error instanceof HttpError ? error : fastifyErrorAnswer(error, config.maxBodyBytes);
    if (!answer && error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      answer = new HttpError(error.statusCode, { message: error.message });
    }
    if (!answer) {
      // a summary and the top frames: whole errors (Prisma's carry kilobytes of code frames) logged for
      // every request of an outage would flood the log and the heap
      const frames = (error.stack ?? '').split('\n').map((line) => line.trim()).filter((line) => line.startsWith('at ')).slice(0, 5);
      request.log.error({ failure: errorSummary(error), frames }, 'unexpected error');
      // docs/spec.md §7: a server problem on /events is "400 Failed to record"
      answer = isEvents ? new HttpError(400, { message: MESSAGES.failedToRecord }) : new HttpError(500, { message: 'Internal error.' });
    }
    reply.code(answer.statusCode).send(answer.body);
  });

  // mini app pages on any origin call /events and load /index.js; the site and its API allow no
  // cross-origin use at all (part of their CSRF protection)
  const publicCors = {
    origin: true,
    methods: ['GET', 'POST', 'OPTIONS'],
    allowedHeaders: ['content-type', 'content-encoding', ...TOKEN_HEADERS],
    exposedHeaders: ['retry-after'],
    maxAge: 86_400,
  };
  await app.register(cors, {
    delegator: (request, callback) => callback(null, /^\/(events|index\.js|api\/catalog)(\/|\?|$)/.test(request.url ?? '') ? publicCors : { origin: false }),
  });
  registerDecoder(app, config.maxBodyBytes);

  const redis = config.redisUrl
    ? new Redis(config.redisUrl, { connectTimeout: 1_000, maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: false })
    : undefined;
  redis?.on('error', (error) => app.log.warn({ err: error.message }, 'redis unavailable; rate limits are not enforced'));
  app.addHook('onClose', async () => {
    redis?.disconnect();
  });
  await app.register(rateLimit, {
    global: false,
    redis,
    skipOnError: true, // Redis down: accept (and store) rather than refuse
    nameSpace: 'tma-rl:',
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
  });

  const steps = createSteps({
    maxEventsPerRequest: config.maxEventsPerRequest,
    tokens: services.tokens,
    tokenScreen: services.tokenScreen,
    ingestLog: services.ingestLog!,
    pseudonymiser: services.pseudonymiser,
    rejections: services.rejections,
    quota: services.quota,
  });

  // the pipeline's state on each /events request, set by its first step: declared up front so every request
  // object has the same shape
  app.decorateRequest('ingest', null);
  app.post('/events', {
    onRequest: steps.screen,
    // decode ran in the content-type parser; then:
    preValidation: steps.validate,
    preHandler: [
      steps.authorise,
      app.rateLimit({
        max: config.rateLimitMax,
        timeWindow: config.rateLimitWindowMs,
        // one client = one IP with one token; hashed so raw IPs never reach Redis
        keyGenerator: (request) =>
          services.secrets.hmac('rate-limit', `${request.ip}\n${tokenHeader(request)}`).toString('base64url').slice(0, 22),
        errorResponseBuilder: (request) => steps.tooManyRequests(request),
      }),
      steps.dailyQuota,
    ],
    handler: steps.record,
  });

  // the official client asks for per-event caps at init; without an answer it logs a 404 in the page
  app.get('/events/threshold', async () => ({ 'app-hide': 3 }));

  // the store being down delays loading, not ingestion: the node stays in service (200) while its log takes
  // the events, and says so; the backlog tells how far loading is behind
  app.get('/healthz', async () => {
    const storeUp = await services.store.sql.query('SELECT 1').then(
      () => true,
      () => false,
    );
    const log = services.ingestLog!;
    const backlog = log.stats();
    return {
      status: storeUp ? 'ok' : 'store unavailable',
      store: services.store.kind,
      backlog: {
        requests: backlog.records,
        events: backlog.events,
        bytes: backlog.bytes,
        oldest_seconds: backlog.oldestAppendedAt === null ? 0 : Math.max(0, (Date.now() - backlog.oldestAppendedAt) / 1000),
      },
      loaded_through: log.loader.loadedThrough,
    };
  });

  app.get('/metrics', async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });

  registerSdkScript(app);
  await registerSite(app, services, options.site);
  registerCatalogRoutes(app, services.store.sql);

  const openapi = openApiDocument(config);
  app.get('/openapi.json', async () => openapi);

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ route, status: reply.statusCode });
    request.log.debug({ req: request, status: reply.statusCode, ms: reply.elapsedTime }, 'request');
    if (route !== '/events' || request.method !== 'POST') return;
    if (reply.statusCode === 201) metrics.eventsAccepted.inc(request.ingest!.events.length);
    else metrics.eventsRejected.inc({ status: reply.statusCode });
  });

  return app;
}

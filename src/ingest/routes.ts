// The ingestion routes as one Fastify plugin: POST /events (the pipeline's steps in order) and
// GET /events/threshold. The rate limit and its Redis connection belong to this plugin alone. The routes' schemas
// describe them for GET /openapi.json; the pipeline's own steps check each request.
import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { describedOnly } from '../platform/described-route.ts';
import type { Services } from '../services.ts';
import { postEventsSchema, sharedEventSchema, thresholdSchema } from './openapi.ts';
import { createSteps, credentialOf } from './steps.ts';

/** the client a rate limit counts: its IP with its token or server key */
const clientOf = (request: FastifyRequest) => `${request.ip}\n${credentialOf(request)}`;

export const ingestRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { config } = services;
  // loaded only when configured: most installations have no Redis
  const redis = config.redisUrl
    ? new (await import('ioredis')).Redis(config.redisUrl, {
        connectTimeout: 1_000,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        lazyConnect: false,
      })
    : undefined;
  redis?.on('error', (error) =>
    app.log.warn({ err: error.message }, 'redis unavailable; rate limits are not enforced'),
  );
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
    serverKeys: services.serverKeys,
    ingestLog: services.ingestLog!,
    pseudonymiser: services.pseudonymiser,
    rejections: services.rejections,
    quota: services.quota,
    launchChecker: services.launchChecker,
    reportBotId: (appId, botId) => services.reportedBotIds.report(appId, botId),
  });

  // the pipeline's state on each request, set by its first step: declared up front so every request object
  // has the same shape
  app.decorateRequest('ingest', null);
  app.addSchema(sharedEventSchema);
  app.post('/events', {
    // validating here would come after the pipeline's own validate step and answer other messages than the spec's
    ...describedOnly(postEventsSchema(config)),
    onRequest: steps.screen,
    // decode ran in the content-type parser; then:
    preValidation: steps.validate,
    preHandler: [
      steps.authorise,
      app.rateLimit({
        max: config.rateLimitMax,
        timeWindow: config.rateLimitWindowMs,
        // one client = one IP with one token or server key; hashed when the counts are kept in Redis, so raw IPs
        // never reach it (kept in this process's memory, the key is no more than the request itself holds)
        keyGenerator: redis ? (request) => services.secrets.shortHash('rate-limit', clientOf(request)) : clientOf,
        errorResponseBuilder: (request) => steps.tooManyRequests(request),
      }),
      steps.checkLaunches,
      steps.dailyQuota,
    ],
    handler: steps.record,
  });

  // the official client asks for per-event caps at init; without an answer it logs a 404 in the page
  app.get('/events/threshold', describedOnly(thresholdSchema), async () => ({ 'app-hide': 3 }));
};

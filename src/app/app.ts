// The HTTP application: Fastify with the service's logging, error answers, body decoding and CORS policy,
// composed from plugins: ingestion (/events), the SDK script and package (/index.js, /sdk/), the browser side (the
// site and the public catalog, sharing the session cookie and security headers), the read API (/api/v1),
// operations (/healthz, /metrics, /openapi.json, generated from the routes' schemas) and the management bot's
// webhook when it has one.
import cors from '@fastify/cors';
import Fastify, { LogController, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import type { BotWebhookOptions } from '../bot/webhook-route.ts';
import { registerDecoder } from '../ingest/decode.ts';
import { ingestRoutes } from '../ingest/routes.ts';
import { sdkPackageRoutes } from '../sdk-serving/package-routes.ts';
import { sdkScriptRoute } from '../sdk-serving/script-route.ts';
import { TOKEN_HEADERS } from '../ingest/steps.ts';
import { registerCatalogRoutes } from '../site/catalog-routes.ts';
import { readApiRoutes } from '../read-api/routes.ts';
import { serviceLogger, type ServiceLogger } from '../platform/logger.ts';
import type { Services } from '../services.ts';
import { registerNotFoundSecurityHeaders } from '../site/headers.ts';
import { registerSite, type SiteOptions } from '../site/index.ts';
import { answerErrors } from './errors.ts';
import { lazySchemaController } from './lazy-schema-compilers.ts';
import { collectOpenApi } from './openapi.ts';
import { opsRoutes } from './ops.ts';

export interface AppOptions {
  site?: SiteOptions;
  /** the management bot's webhook, when its updates arrive by webhook (BOT_WEBHOOK_URL) */
  botWebhook?: BotWebhookOptions;
  /** the socket the service listened on while it started (src/app/starting.ts), instead of a server of its own */
  serverFactory?: FastifyServerFactory;
  /** the service's logger (default: one at the configured level) */
  logger?: ServiceLogger;
}

/** mini app pages on any origin call /events and load /index.js; the catalog's JSON is public too */
const PUBLIC_CORS = {
  origin: true,
  methods: ['GET', 'POST', 'OPTIONS'],
  allowedHeaders: ['content-type', 'content-encoding', ...TOKEN_HEADERS],
  exposedHeaders: ['retry-after'],
  maxAge: 86_400,
};
const PUBLIC_PATH = /^\/(events|index\.js|api\/catalog)(\/|\?|$)/;

export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const { config, metrics } = services;
  const app = Fastify({
    // a hop count is supported by Fastify (proxy-addr) but missing from its types
    trustProxy: config.trustProxy as boolean | string | string[],
    bodyLimit: config.maxBodyBytes,
    requestTimeout: 30_000,
    // while stopping, a request that arrives on a kept-alive connection is still served (with
    // "Connection: close"): the spec has no 503, and the store is open until every request is answered
    return503OnClosing: false,
    ...(options.serverFactory ? { serverFactory: options.serverFactory } : {}),
    schemaController: lazySchemaController(),
    // per-request lines go out at debug level from the onResponse hook below, without client IPs
    logController: new LogController({ disableRequestLogging: true }),
    loggerInstance: options.logger ?? serviceLogger(config.logLevel),
  });

  // on the root before any route, so that every scope inherits them
  answerErrors(app, config.maxBodyBytes);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.requests.inc({ route, status: reply.statusCode });
    request.log.debug({ req: request, status: reply.statusCode, ms: reply.elapsedTime }, 'request');
    if (route !== '/events' || request.method !== 'POST') return;
    if (reply.statusCode === 201) metrics.eventsAccepted.inc(request.ingest!.events.length);
    else metrics.eventsRejected.inc({ status: reply.statusCode });
  });
  // one body policy for the whole service: decompressed within MAX_BODY_BYTES, JSON without prototype keys
  registerDecoder(app, config.maxBodyBytes);
  // the site and its API allow no cross-origin use at all (part of their CSRF protection)
  await app.register(cors, {
    delegator: (request, callback) =>
      callback(null, PUBLIC_PATH.test(request.url ?? '') ? PUBLIC_CORS : { origin: false }),
  });
  registerNotFoundSecurityHeaders(app, config.publicUrl?.startsWith('https://') ?? false);
  // before the routes: it collects each one as it is added
  const openApiDocument = collectOpenApi(app);

  // Fastify loads plugins in microtasks, which starve the socket: between the surfaces the start lets the answers
  // of "starting" out (/healthz within 0.1 s while the service starts)
  const letRequestsThrough = () => new Promise((resolve) => setImmediate(resolve));
  await app.register(ingestRoutes, { services });
  await letRequestsThrough();
  await app.register(sdkScriptRoute);
  await app.register(sdkPackageRoutes);
  await letRequestsThrough();
  await app.register(async (browser) => {
    await registerSite(browser, services, options.site);
    await letRequestsThrough();
    registerCatalogRoutes(browser, services.store.reads);
  });
  await letRequestsThrough();
  await app.register(readApiRoutes, { services });
  await letRequestsThrough();
  await app.register(opsRoutes, { services, openApiDocument });
  // grammY loads with the bot (src/app/serve.ts): the route's module only when there is one
  if (options.botWebhook)
    await app.register((await import('../bot/webhook-route.ts')).botWebhookRoute, options.botWebhook);
  return app;
}

// Operations routes: GET /healthz (the store, and the backlog waiting in the node's log), GET /metrics, and
// GET /openapi.json (generated from the routes' schemas).
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../services.ts';
import { describedOnly } from '../described-route.ts';
import { OPENAPI_VERSION } from './openapi.ts';

const healthzSchema = {
  summary: 'Liveness, whether the store answers, and the backlog of the durable log',
  response: {
    200: {
      description: 'Ingesting: status "ok", or "store unavailable" while the events wait in the log',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['status', 'store', 'backlog', 'loaded_through'],
            properties: {
              status: { enum: ['ok', 'store unavailable'] },
              store: { enum: ['embedded', 'server'] },
              backlog: {
                type: 'object',
                description: 'requests in the durable log that the store does not hold yet',
                required: ['requests', 'events', 'bytes', 'oldest_seconds'],
                properties: {
                  requests: { type: 'integer' },
                  events: { type: 'integer' },
                  bytes: { type: 'integer' },
                  oldest_seconds: { type: 'number' },
                },
              },
              loaded_through: { type: 'integer', description: 'the last log record the store holds' },
            },
          },
        },
      },
    },
  },
};

const metricsSchema = {
  summary: 'Prometheus metrics',
  response: {
    200: {
      description: 'Prometheus text exposition format',
      content: { 'text/plain': { schema: { type: 'string' } } },
    },
  },
};

const openApiSchema = {
  summary: 'This document',
  response: {
    200: {
      description: `OpenAPI ${OPENAPI_VERSION} document`,
      content: { 'application/json': { schema: { type: 'object' } } },
    },
  },
};

export const opsRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  // the store being down delays loading, not ingestion: the node stays in service (200) while its log takes
  // the events, and says so; the backlog tells how far loading is behind
  app.get('/healthz', describedOnly(healthzSchema), async () => {
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
        oldest_seconds:
          backlog.oldestAppendedAt === null ? 0 : Math.max(0, (Date.now() - backlog.oldestAppendedAt) / 1000),
      },
      loaded_through: log.loader.loadedThrough,
    };
  });

  app.get('/metrics', describedOnly(metricsSchema), async (_request, reply) => {
    reply.type(services.metrics.registry.contentType);
    return services.metrics.registry.metrics();
  });

  // the document is complete once every route is registered; @fastify/swagger builds it once and keeps it
  app.get('/openapi.json', describedOnly(openApiSchema), async () => app.swagger());
};

// Operations routes: GET /healthz (the store, and the backlog waiting in the node's log), GET /metrics, and
// GET /openapi.json.
import type { FastifyPluginAsync } from 'fastify';
import { openApiDocument } from '../ingest/openapi.ts';
import type { Services } from '../services.ts';

export const opsRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
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
        oldest_seconds:
          backlog.oldestAppendedAt === null ? 0 : Math.max(0, (Date.now() - backlog.oldestAppendedAt) / 1000),
      },
      loaded_through: log.loader.loadedThrough,
    };
  });

  app.get('/metrics', async (_request, reply) => {
    reply.type(services.metrics.registry.contentType);
    return services.metrics.registry.metrics();
  });

  const openapi = openApiDocument(services.config);
  app.get('/openapi.json', async () => openapi);
};

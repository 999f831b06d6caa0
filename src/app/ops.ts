// Operations routes: GET /healthz (whether the node ingests, the store's state, the backlog waiting in the node's log), GET /metrics, and
// GET /openapi.json (generated from the routes' schemas).
import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../services.ts';
import { describedOnly } from '../platform/described-route.ts';
import { OPENAPI_VERSION } from './openapi.ts';
import { logDirIn } from '../events/write/log-dir.ts';
import { lossTotals, unacknowledgedLosses } from '../log/losses.ts';

const healthBody = (statuses: string[]) => ({
  type: 'object',
  required: ['status', 'store', 'backlog', 'loaded_through', 'store_last_success_seconds'],
  properties: {
    status: { enum: statuses },
    reason: { type: 'string', description: 'why the status is not "ok"' },
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
    store_last_success_seconds: {
      type: ['number', 'null'],
      description: "seconds since the loader's last commit or the background probe last got an answer from the store",
    },
    lost: {
      type: 'object',
      description:
        'acknowledged events the durable log was found to have lost (a damaged file), until an operator ' +
        'acknowledges them (cli log acknowledge); absent when none',
      required: ['events', 'requests', 'since'],
      properties: {
        events: { type: 'integer' },
        requests: { type: 'integer' },
        since: { type: 'string', description: 'when the first of them was found (ISO 8601)' },
      },
    },
  },
});

const healthzSchema = {
  summary: 'Liveness, whether the node can ingest and the store answers, and the backlog of the durable log',
  description:
    'Answered from state the loader and a background probe keep, never by waiting for the store. 503 means the ' +
    'node cannot take events (its disk is full, or its log holds all it may); a supervisor should take it out of ' +
    'rotation and alert, not restart it: it resumes by itself once space returns.',
  response: {
    200: {
      description:
        'Ingesting: status "ok", "store unavailable" while the events wait in the log, or "events lost" while a loss ' +
        'of the log (its `lost`) is not acknowledged',
      content: { 'application/json': { schema: healthBody(['ok', 'store unavailable', 'events lost']) } },
    },
    503: {
      description:
        'Not ingesting: "disk full" (the disk under DATA_DIR) or "log full" (LOG_MAX_BYTES waiting); while the node ' +
        'opens its store and applies migrations, "starting" (with only status, reason and store)',
      content: { 'application/json': { schema: healthBody(['disk full', 'log full']) } },
    },
  },
};

/** a store failure that means its disk is full: the log on the same disk cannot take events either */
const DISK_FULL = /no space left on device|ENOSPC|could not extend file/i;

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

/** how long /healthz waits for a fresh probe of the store before it answers from the recorded state */
const HEALTH_PROBE_WAIT_MS = 100;

export const opsRoutes: FastifyPluginAsync<{ services: Services; openApiDocument: () => Promise<unknown> }> = async (
  app,
  { services, openApiDocument },
) => {
  // the store being down delays loading, not ingestion: the node stays in service (200) while its log takes the
  // events, and says so; it answers 503 only when it cannot take events. It waits for the store a moment at most.
  app.get('/healthz', describedOnly(healthzSchema), async (_request, reply) => {
    const log = services.ingestLog!;
    const backlog = log.stats();
    const store = await services.storeHealth.current(HEALTH_PROBE_WAIT_MS);
    const refusal = log.refusal();
    const diskFull = refusal ? refusal.reason !== 'max-bytes' : DISK_FULL.test(store.failure?.reason ?? '');
    const lost = lossTotals(unacknowledgedLosses(logDirIn(services.config.dataDir)));
    const lossReason =
      lost.events + lost.records > 0
        ? `the durable log was found damaged: ${lost.events} acknowledged events (${lost.records} requests) are lost; ` +
          'acknowledge with: cli log acknowledge'
        : undefined;
    const status = diskFull
      ? 'disk full'
      : refusal
        ? 'log full'
        : store.failure
          ? 'store unavailable'
          : lossReason
            ? 'events lost'
            : 'ok';
    const reason = refusal?.message ?? store.failure?.reason ?? lossReason;
    reply.code(diskFull || refusal ? 503 : 200);
    return {
      status,
      ...(status === 'ok' || !reason ? {} : { reason }),
      store: services.store.kind,
      backlog: {
        requests: backlog.records,
        events: backlog.events,
        bytes: backlog.bytes,
        oldest_seconds:
          backlog.oldestAppendedAt === null ? 0 : Math.max(0, (Date.now() - backlog.oldestAppendedAt) / 1000),
      },
      loaded_through: log.loader.loadedThrough,
      store_last_success_seconds:
        store.lastSuccessAt === null ? null : Math.max(0, (Date.now() - store.lastSuccessAt) / 1000),
      ...(lossReason ? { lost: { events: lost.events, requests: lost.records, since: lost.since } } : {}),
    };
  });

  app.get('/metrics', describedOnly(metricsSchema), async (_request, reply) => {
    reply.type(services.metrics.registry.contentType);
    return services.metrics.registry.metrics();
  });

  // the document is complete once every route is registered; it is made on the first request and kept
  app.get('/openapi.json', describedOnly(openApiSchema), async () => openApiDocument());
};

// Prometheus metrics of the service (prom-client), one registry per service instance.
import client from 'prom-client';

export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  return {
    registry,
    requests: new client.Counter({
      name: 'tma_http_requests_total',
      help: 'HTTP requests answered, by route and status',
      labelNames: ['route', 'status'] as const,
      registers: [registry],
    }),
    eventsAccepted: new client.Counter({
      name: 'tma_events_accepted_total',
      help: 'Events acknowledged with 201 (committed)',
      registers: [registry],
    }),
    eventsStored: new client.Counter({
      name: 'tma_events_stored_total',
      help: 'Events newly stored (accepted minus retried duplicates)',
      registers: [registry],
    }),
    eventsRejected: new client.Counter({
      name: 'tma_events_rejected_total',
      help: 'Requests to POST /events refused, by status',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    commitSeconds: new client.Histogram({
      name: 'tma_commit_duration_seconds',
      help: 'Time to commit one group of events',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    commitEvents: new client.Histogram({
      name: 'tma_commit_events',
      help: 'Events written by one group commit',
      buckets: [1, 5, 20, 50, 100, 250, 500, 1000, 2500, 5000],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

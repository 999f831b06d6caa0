// Prometheus metrics of the service (prom-client), one registry per service instance.
import client from 'prom-client';

/** what PGlite's thread holds: its JavaScript heap (V8) and PGlite's WebAssembly memory, in bytes */
export interface ThreadMemory {
  heapUsed: number;
  heapTotal: number;
  /** memory outside the heap held by its objects, the WebAssembly memory not counted */
  external: number;
  /** PGlite's WebAssembly memory: it grows to the largest statement and never shrinks (only touched pages count in RSS) */
  wasm: number;
}

/** what the durable log holds waiting for the store, read when /metrics is scraped */
export interface BacklogReading {
  records: number;
  events: number;
  bytes: number;
  oldestAppendedAt: number | null;
}

export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  let readBacklog: () => BacklogReading = () => ({ records: 0, events: 0, bytes: 0, oldestAppendedAt: null });
  const backlogGauge = (name: string, help: string, value: (reading: BacklogReading) => number) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value(readBacklog()));
      },
    });
  backlogGauge(
    'tma_log_backlog_records',
    'Requests in the durable log that the store does not hold yet',
    (reading) => reading.records,
  );
  backlogGauge('tma_log_backlog_events', 'Events in those requests', (reading) => reading.events);
  backlogGauge('tma_log_backlog_bytes', 'Bytes of those requests', (reading) => reading.bytes);
  backlogGauge('tma_log_backlog_oldest_seconds', 'Age of the oldest of them (0 when none waits)', (reading) =>
    reading.oldestAppendedAt === null ? 0 : Math.max(0, (Date.now() - reading.oldestAppendedAt) / 1000),
  );
  let readLosses: () => { events: number; records: number } = () => ({ events: 0, records: 0 });
  for (const [name, help, part] of [
    [
      'tma_log_lost_events',
      "Acknowledged events the node's durable log was found to have lost (a damaged file), not yet acknowledged by an operator",
      'events',
    ],
    ['tma_log_lost_records', 'The requests those events came in', 'records'],
  ] as const)
    new client.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(readLosses()[part]);
      },
    });
  let readThreadMemory: (() => Promise<ThreadMemory>) | undefined;
  const threadGauge = (name: string, help: string, value: (memory: ThreadMemory) => number) =>
    new client.Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        // the embedded store's thread only; a thread being replaced answers nothing
        const memory = await readThreadMemory?.().catch(() => undefined);
        if (memory) this.set(value(memory));
      },
    });
  threadGauge(
    'tma_embedded_thread_heap_used_bytes',
    "JavaScript heap in use on the embedded store's thread",
    (memory) => memory.heapUsed,
  );
  threadGauge(
    'tma_embedded_thread_heap_total_bytes',
    "JavaScript heap the embedded store's thread holds",
    (memory) => memory.heapTotal,
  );
  threadGauge(
    'tma_embedded_thread_external_bytes',
    "Memory outside the JavaScript heap held by the embedded store's thread, its WebAssembly memory aside",
    (memory) => memory.external,
  );
  threadGauge(
    'tma_embedded_wasm_memory_bytes',
    "Size of the embedded store's WebAssembly memory (PostgreSQL's heap); only its touched pages are resident",
    (memory) => memory.wasm,
  );
  return {
    /** where the embedded store's gauges read from: its thread (never set on PostgreSQL) */
    watchEmbeddedMemory(read: () => Promise<ThreadMemory>) {
      readThreadMemory = read;
    },
    /** where the backlog gauges read from: the node's durable log */
    watchBacklog(read: () => BacklogReading) {
      readBacklog = read;
    },
    /** where the loss gauges read from: the node's recorded losses not yet acknowledged */
    watchLosses(read: () => { events: number; records: number }) {
      readLosses = read;
    },
    registry,
    requests: new client.Counter({
      name: 'tma_http_requests_total',
      help: 'HTTP requests answered, by route and status',
      labelNames: ['route', 'status'] as const,
      registers: [registry],
    }),
    eventsAccepted: new client.Counter({
      name: 'tma_events_accepted_total',
      help: 'Events acknowledged with 201 (durably in the log)',
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
      help: 'Time the loader took to store one batch of the log',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    freshnessSeconds: new client.Histogram({
      name: 'tma_request_freshness_seconds',
      help: "Time from a request's append to the durable log until the store holds it (what apps show and the dashboard wait for), per request",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 30, 60],
      registers: [registry],
    }),
    commitEvents: new client.Histogram({
      name: 'tma_commit_events',
      help: 'Events in one batch the loader stored',
      buckets: [1, 5, 20, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 25_000, 50_000],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

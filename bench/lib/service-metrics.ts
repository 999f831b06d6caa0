// Reading the service's own figures during a bench: counters and histogram buckets from /metrics, the backlog
// from /healthz, and a quantile of what a histogram counted between two readings.
import { setTimeout as sleep } from 'node:timers/promises';

/** every sample line of a Prometheus text page, by its name with labels as printed */
export type MetricsReading = Map<string, number>;

export async function readMetrics(serviceUrl: string): Promise<MetricsReading> {
  const text = await (await fetch(`${serviceUrl}/metrics`)).text();
  const reading: MetricsReading = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    reading.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return reading;
}

/** a counter's growth between two readings */
export function counterDelta(before: MetricsReading, after: MetricsReading, name: string): number {
  return (after.get(name) ?? 0) - (before.get(name) ?? 0);
}

/**
 * The q-quantile of what a histogram observed between two readings, as the upper bound of the bucket holding it
 * (a histogram knows no finer); null when it observed nothing.
 */
export function histogramQuantile(
  before: MetricsReading,
  after: MetricsReading,
  name: string,
  q: number,
): number | null {
  const buckets: { le: number; count: number }[] = [];
  for (const [key, value] of after) {
    const match = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\}$`).exec(key);
    if (match)
      buckets.push({ le: match[1] === '+Inf' ? Infinity : Number(match[1]), count: value - (before.get(key) ?? 0) });
  }
  buckets.sort((a, b) => a.le - b.le);
  const total = buckets.at(-1)?.count ?? 0;
  if (total === 0) return null;
  return buckets.find((bucket) => bucket.count >= q * total)!.le;
}

export interface Backlog {
  requests: number;
  bytes: number;
  oldest_seconds: number;
}

export async function readBacklog(serviceUrl: string): Promise<Backlog> {
  const body = (await (await fetch(`${serviceUrl}/healthz`)).json()) as { backlog: Backlog };
  return body.backlog;
}

/** waits until the service's log holds nothing for the store (or timeoutMs); returns how long that took */
export async function drainedWithin(serviceUrl: string, timeoutMs: number): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < timeoutMs) {
    if ((await readBacklog(serviceUrl)).requests === 0) return performance.now() - started;
    await sleep(100);
  }
  return null;
}

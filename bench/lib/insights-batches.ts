// The insights benches' loader batches: the mix's request bodies (bench/lib/bodies.ts) made rows as the service
// makes them (normalised, pseudonymised, keyed with the client's time first, with their funnel postings) and grouped
// as the loader groups the records it reads from the durable log.
import zlib from 'node:zlib';
import { decodeRequest, encodeRequest, type RequestRecord } from '../../src/events/write/log-record.ts';
import { Pseudonymiser } from '../../src/events/request/pseudonym.ts';
import { eventRows } from '../../src/events/request/rows.ts';
import type { RawEvent } from '../../src/events/request/validate.ts';
import { Secrets } from '../../src/tokens/secret.ts';
import { insightsMixBodies, singleEventBodies } from './bodies.ts';

/** the event mixes measured: custom events with properties are what the insights' aggregates cost most */
export const MIXES = {
  /** a quarter custom events, properties of few values: launches, hides, wallet connections, a few trackEvent calls */
  typical: { customEvery: 4, skus: 30 },
  /** nearly every event a custom event, one property of hundreds of values */
  'custom-heavy': { customEvery: 1, skus: 300 },
} as const;
export type Mix = keyof typeof MIXES;

/** events per request, as the service's own load sends them */
export const REQUEST_EVENTS = 20;

/** the keys the service makes: user keys, and event keys with the client's time first */
const pseudonymiser = new Pseudonymiser(new Secrets(Buffer.from('bench-insights-secret')));

/**
 * Requests (each a list of events, as decoded from its body) made rows as the service makes them, as the log's records
 * in the batches of `requestsPerBatch` the loader reads; `insights`: the records hold the funnel postings and custom
 * events' counts, as a service keeping the insights writes them
 */
function loaderBatches(
  appId: number,
  requests: RawEvent[][],
  requestsPerBatch: number,
  insights: boolean,
): RequestRecord[][] {
  const receivedAt = new Date();
  const records = requests.map((events) => {
    const { rows, bytes } = eventRows(appId, events, receivedAt, pseudonymiser);
    return decodeRequest(encodeRequest(rows, bytes, insights));
  });
  const batches: RequestRecord[][] = [];
  for (let n = 0; n < records.length; n += requestsPerBatch) batches.push(records.slice(n, n + requestsPerBatch));
  return batches;
}

/** `events` events of the mix for app `appId`, in batches of about `batchEvents` (see loaderBatches) */
export function insightsRecords(
  appId: number,
  mix: Mix,
  events: number,
  batchEvents: number,
  insights = true,
): RequestRecord[][] {
  const bodies = insightsMixBodies({
    appName: 'bench_insights',
    tag: `loader-${mix}`,
    count: events / REQUEST_EVENTS,
    ...MIXES[mix],
  });
  const requests = bodies.map((body) => JSON.parse(zlib.gunzipSync(body).toString('utf8')) as RawEvent[]);
  return loaderBatches(appId, requests, Math.max(1, Math.round(batchEvents / REQUEST_EVENTS)), insights);
}

/**
 * `events` single-event requests as the ingest bench sends them (bench/lib/bodies.ts: a custom event, users spread
 * over 20,000, sessions of 8), in batches of `batchEvents` (see loaderBatches)
 */
export function singleEventRecords(
  appId: number,
  events: number,
  batchEvents: number,
  insights = true,
): RequestRecord[][] {
  const bodies = singleEventBodies({ appName: 'bench_insights', tag: 'loader-single', count: events });
  return loaderBatches(
    appId,
    bodies.map((body) => [JSON.parse(body.toString('utf8')) as RawEvent]),
    batchEvents,
    insights,
  );
}

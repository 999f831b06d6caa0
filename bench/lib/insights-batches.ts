// The insights benches' loader batches: the mix's request bodies (bench/lib/bodies.ts) made rows as the service
// makes them (normalised, pseudonymised, keyed with the client's time first, with their funnel postings) and grouped
// as the loader groups the records it reads from the durable log.
import zlib from 'node:zlib';
import { decodeRequest, encodeRequest, type RequestRecord } from '../../src/events/write/log-record.ts';
import { Pseudonymiser } from '../../src/events/request/pseudonym.ts';
import { eventRows } from '../../src/events/request/rows.ts';
import { Secrets } from '../../src/secret.ts';
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
 * `events` events of the mix for app `appId`, as the log's records of the batches of about `batchEvents` the loader
 * reads; `insights`: the records hold the funnel postings and custom events' counts, as a service keeping the insights
 * writes them
 */
export function insightsRecords(
  appId: number,
  mix: Mix,
  events: number,
  batchEvents: number,
  insights = true,
): RequestRecord[][] {
  const receivedAt = new Date();
  const bodies = insightsMixBodies({
    appName: 'bench_insights',
    tag: `loader-${mix}`,
    count: events / REQUEST_EVENTS,
    ...MIXES[mix],
  });
  const records = bodies.map((body) => {
    const parsed = JSON.parse(zlib.gunzipSync(body).toString('utf8'));
    const { rows, bytes } = eventRows(appId, parsed, receivedAt, pseudonymiser);
    return decodeRequest(encodeRequest(rows, bytes, insights));
  });
  const requestsPerBatch = Math.max(1, Math.round(batchEvents / REQUEST_EVENTS));
  const batches: RequestRecord[][] = [];
  for (let n = 0; n < records.length; n += requestsPerBatch) batches.push(records.slice(n, n + requestsPerBatch));
  return batches;
}

/**
 * `events` single-event requests as the ingest bench sends them (bench/lib/bodies.ts: a custom event, users spread
 * over 20,000, sessions of 8), as the log's records of the batches of `batchEvents` the loader reads; `insights` as
 * for insightsRecords
 */
export function singleEventRecords(
  appId: number,
  events: number,
  batchEvents: number,
  insights = true,
): RequestRecord[][] {
  const receivedAt = new Date();
  const records = singleEventBodies({ appName: 'bench_insights', tag: 'loader-single', count: events }).map((body) => {
    const { rows, bytes } = eventRows(appId, [JSON.parse(body.toString('utf8'))], receivedAt, pseudonymiser);
    return decodeRequest(encodeRequest(rows, bytes, insights));
  });
  const batches: RequestRecord[][] = [];
  for (let n = 0; n < records.length; n += batchEvents) batches.push(records.slice(n, n + batchEvents));
  return batches;
}

// One accepted request as the durable log keeps it: a header line (app, receive time, events, bytes, the lengths of
// its funnel postings and of its summary), the postings, the summary, then its rows already in the event insert's
// form, so the loader joins records' bytes into a batch without decoding them.
import { BatchSummary, encodeRequestSummary } from './request-summary.ts';
import { encodeRequestPostings } from './funnel-posting-format.ts';
import { BatchPostings } from './batch-postings.ts';
import type { EventBatch } from './event-plane.ts';
import { decodeEventRow, encodeEventRow, type EventRow } from './event-columns.ts';
import { isoDayOf } from '../days.ts';

export interface RequestRecord {
  appId: number;
  /** ms since the epoch; the same for every row of a request */
  receivedAt: number;
  events: number;
  /** the events' size as JSON text, as the daily quota counted it */
  bytes: number;
  /** the rows' arrays joined by commas (no brackets), as UTF-8 bytes */
  rows: Buffer;
  /** the rows' funnel postings (encodeRequestPostings); null in a record written before the log kept them */
  postings: Buffer | null;
  /** the rows' summary (encodeRequestSummary); null in a record written before the log kept it */
  summary: Buffer | null;
}

const NEWLINE = 0x0a;
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/**
 * rows of one request (one app, one receive time), with their summary and, unless the store keeps no insights, their
 * funnel postings and their custom events' counts
 */
export function encodeRequest(rows: EventRow[], bytes: number, insights = true): Buffer {
  const first = rows[0]!;
  const postingBytes = insights ? encodeRequestPostings(rows) : Buffer.alloc(0);
  const summary = encodeRequestSummary(rows, insights);
  let text = '';
  for (let i = 0; i < rows.length; i++) text += (i === 0 ? '' : ',') + JSON.stringify(encodeEventRow(rows[i]!));
  return Buffer.concat([
    Buffer.from(
      `${first.appId} ${first.receivedAt.getTime()} ${rows.length} ${bytes} ${postingBytes.length} ${summary.length}\n`,
      'latin1',
    ),
    postingBytes,
    summary,
    Buffer.from(text, 'utf8'),
  ]);
}

/** a record's header line: everything but its sections, and where they start (postings and summary: -1 when absent) */
export function decodeRequestHeader(
  value: Buffer,
): Omit<RequestRecord, 'rows' | 'postings' | 'summary'> & { postingsAt: number; summaryAt: number; rowsAt: number } {
  const end = value.indexOf(NEWLINE);
  const [appId, receivedAt, events, bytes, postings, summary] = value
    .toString('latin1', 0, end)
    .split(' ')
    .map(Number) as [number, number, number, number, number | undefined, number | undefined];
  const sections = postings !== undefined && summary !== undefined;
  return {
    appId,
    receivedAt,
    events,
    bytes,
    postingsAt: sections ? end + 1 : -1,
    summaryAt: sections ? end + 1 + postings : -1,
    rowsAt: sections ? end + 1 + postings + summary : end + 1,
  };
}

/** the bytes of a record's rows: what its events weigh in the event insert (its postings and summary merge smaller) */
export const rowBytesOf = (value: Buffer): number => value.length - decodeRequestHeader(value).rowsAt;

export function decodeRequest(value: Buffer): RequestRecord {
  const { postingsAt, summaryAt, rowsAt, ...header } = decodeRequestHeader(value);
  return {
    ...header,
    postings: postingsAt < 0 ? null : value.subarray(postingsAt, summaryAt),
    summary: summaryAt < 0 ? null : value.subarray(summaryAt, rowsAt),
    rows: value.subarray(rowsAt),
  };
}

/** the rows of a record, as objects: for a record written before the log kept its postings and summary */
const rowsOf = (record: RequestRecord): EventRow[] =>
  (JSON.parse(`[${record.rows.toString('utf8')}]`) as unknown[][]).map(decodeEventRow);

/** the records' rows as one batch for the store, with their events and bytes per app and UTC day */
export function batchOf(records: RequestRecord[], logOffset?: EventBatch['logOffset']): EventBatch {
  const usage = new Map<string, [number, string, number, number]>();
  const appIds = new Set<number>();
  const postings = new BatchPostings();
  const summary = new BatchSummary();
  for (const record of records) {
    appIds.add(record.appId);
    const rows = record.postings && record.summary ? undefined : rowsOf(record);
    postings.add(record.appId, record.postings ?? encodeRequestPostings(rows!));
    summary.add(record.appId, record.summary ?? encodeRequestSummary(rows!));
    const day = isoDayOf(record.receivedAt);
    const key = `${record.appId} ${day}`;
    const entry = usage.get(key);
    if (entry) {
      entry[2] += record.events;
      entry[3] += record.bytes;
    } else usage.set(key, [record.appId, day, record.events, record.bytes]);
  }
  const parts: Buffer[] = [OPEN];
  for (const record of records) parts.push(record.rows, COMMA);
  if (records.length > 0) parts.pop();
  parts.push(CLOSE);
  return {
    rows: Buffer.concat(parts),
    appIds,
    usage: [...usage.values()],
    users: summary.usersJson(),
    customEvents: summary.customEventsJson(),
    postings: postings.toParams(),
    logOffset,
  };
}

// One accepted request as the durable log keeps it: a header line (app, receive time, events, bytes) and its
// rows already in the event insert's form, so the loader joins records' bytes into a batch without decoding them.
import { rowValues, type EventBatch, type EventRow } from './store.ts';
import { isoDayOf } from './days.ts';

export interface RequestRecord {
  appId: number;
  /** ms since the epoch; the same for every row of a request */
  receivedAt: number;
  events: number;
  /** the events' size as JSON text, as the daily quota counted it */
  bytes: number;
  /** the rows' arrays joined by commas (no brackets), as UTF-8 bytes */
  rows: Buffer;
}

const NEWLINE = 0x0a;
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/** rows of one request (one app, one receive time) */
export function encodeRequest(rows: EventRow[], bytes: number): Buffer {
  const first = rows[0]!;
  let text = `${first.appId} ${first.receivedAt.getTime()} ${rows.length} ${bytes}\n`;
  for (let i = 0; i < rows.length; i++) text += (i === 0 ? '' : ',') + JSON.stringify(rowValues(rows[i]!));
  return Buffer.from(text, 'utf8');
}

/** a record's header line: everything but its rows */
export function decodeRequestHeader(value: Buffer): Omit<RequestRecord, 'rows'> & { rowsAt: number } {
  const end = value.indexOf(NEWLINE);
  const [appId, receivedAt, events, bytes] = value.toString('latin1', 0, end).split(' ').map(Number) as [
    number,
    number,
    number,
    number,
  ];
  return { appId, receivedAt, events, bytes, rowsAt: end + 1 };
}

export function decodeRequest(value: Buffer): RequestRecord {
  const { rowsAt, ...header } = decodeRequestHeader(value);
  return { ...header, rows: value.subarray(rowsAt) };
}

/** the records' rows as one batch for the store, with their events and bytes per app and UTC day */
export function batchOf(records: RequestRecord[], logOffset?: EventBatch['logOffset']): EventBatch {
  const usage = new Map<string, [number, string, number, number]>();
  const appIds = new Set<number>();
  for (const record of records) {
    appIds.add(record.appId);
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
  return { rows: Buffer.concat(parts), appIds, usage: [...usage.values()], logOffset };
}

// One accepted request as the durable log keeps it: a header line (app, receive time, events, bytes, and each section's
// name and length), the sections that the pre-aggregated rollups gather (src/events/write/rollups/gathering.ts), then
// its rows already in the event insert's form, so the loader joins records' bytes into a batch without decoding them.
import { gatheringsOf } from './rollups/index.ts';
import { GatheredSections } from './rollups/gathering.ts';
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
  /** each gathering's section by its name (a record written before the log kept a section lacks it) */
  sections: ReadonlyMap<string, Buffer>;
}

const NEWLINE = 0x0a;
const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');

/**
 * Sections in the header as `name=length`. Records written before sections were named hold two lengths, of the
 * postings and the summary; records older still hold none.
 */
const UNNAMED_SECTIONS = ['postings', 'summary'];

/** rows of one request (one app, one receive time), with the sections the rollups a store keeps gather */
export function encodeRequest(rows: EventRow[], bytes: number, insights = true): Buffer {
  const first = rows[0]!;
  const sections = gatheringsOf(insights).map((gathering) => ({
    name: gathering.section,
    bytes: gathering.encode(rows, insights),
  }));
  let text = '';
  for (let i = 0; i < rows.length; i++) text += (i === 0 ? '' : ',') + JSON.stringify(encodeEventRow(rows[i]!));
  const lengths = sections.map((section) => ` ${section.name}=${section.bytes.length}`).join('');
  return Buffer.concat([
    Buffer.from(`${first.appId} ${first.receivedAt.getTime()} ${rows.length} ${bytes}${lengths}\n`, 'latin1'),
    ...sections.map((section) => section.bytes),
    Buffer.from(text, 'utf8'),
  ]);
}

/** a record's header line: everything but its sections and rows, where each section is, and where the rows start */
export function decodeRequestHeader(value: Buffer): Omit<RequestRecord, 'rows' | 'sections'> & {
  sections: { name: string; start: number; end: number }[];
  rowsAt: number;
} {
  const end = value.indexOf(NEWLINE);
  const [appId, receivedAt, events, bytes, ...lengths] = value.toString('latin1', 0, end).split(' ');
  const sections: { name: string; start: number; end: number }[] = [];
  let at = end + 1;
  lengths.forEach((field, place) => {
    const equals = field.indexOf('=');
    const name = equals < 0 ? UNNAMED_SECTIONS[place]! : field.slice(0, equals);
    const length = Number(equals < 0 ? field : field.slice(equals + 1));
    sections.push({ name, start: at, end: at + length });
    at += length;
  });
  return {
    appId: Number(appId),
    receivedAt: Number(receivedAt),
    events: Number(events),
    bytes: Number(bytes),
    sections,
    rowsAt: at,
  };
}

/** the bytes of a record's rows: what its events weigh in the event insert (its sections merge smaller) */
export const rowBytesOf = (value: Buffer): number => value.length - decodeRequestHeader(value).rowsAt;

export function decodeRequest(value: Buffer): RequestRecord {
  const { sections, rowsAt, ...header } = decodeRequestHeader(value);
  return {
    ...header,
    sections: new Map(sections.map((section) => [section.name, value.subarray(section.start, section.end)])),
    rows: value.subarray(rowsAt),
  };
}

/** the rows of a record, as objects: for a section the record lacks */
const rowsOf = (record: RequestRecord): EventRow[] =>
  (JSON.parse(`[${record.rows.toString('utf8')}]`) as unknown[][]).map(decodeEventRow);

/**
 * The records' rows as one batch for a store (`insights`: whether it keeps the insights), with their events and bytes
 * per app and UTC day, and each gathering's sections merged (made from the rows of a record that lacks one)
 */
export function batchOf(records: RequestRecord[], logOffset?: EventBatch['logOffset'], insights = true): EventBatch {
  const usage = new Map<string, [number, string, number, number]>();
  const appIds = new Set<number>();
  const gathered = new GatheredSections(gatheringsOf(insights));
  for (const record of records) {
    appIds.add(record.appId);
    let rows: EventRow[] | undefined;
    gathered.add(
      record.appId,
      (gathering) => record.sections.get(gathering.section) ?? gathering.encode((rows ??= rowsOf(record)), insights),
    );
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
    gathered: gathered.values(),
    logOffset,
  };
}

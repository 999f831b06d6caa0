// An event's columns, once: the row the service makes of an accepted event, its array as the durable log and the
// event insert keep it, that array read back, and the SQL reading it with each column's cast.
import { JsonTuple, type TupleKind } from '../../db/json-tuples.ts';

export interface EventRow {
  appId: number;
  eventKey: Buffer;
  receivedAt: Date;
  occurredAt: Date;
  day: string;
  eventName: string;
  sessionId: string;
  userKey: Buffer;
  isPremium: boolean;
  isSuccess: boolean;
  platform: string | null;
  locale: string | null;
  startParam: string | null;
  props: Record<string, unknown>;
  /** an app-init's verdict on its launch data (src/events/request/launch-check.ts); absent on other events */
  launchCheck?: string | null;
  /** a verified launch's day: the UTC day of its signed auth_date */
  launchDay?: string | null;
  /** a keyed hash of the launch's signature, when one was read */
  launchProof?: Buffer | null;
  /** sent with a server key: the integrator's own word */
  sentByServer?: true | null;
  /** the event's size as JSON text (characters), counted against the app's daily byte quota; 0 when not measured */
  bytes?: number;
}

type StoredField = Exclude<keyof EventRow, 'bytes'>;

/**
 * The events table's columns in the order of a row's array: the order is the durable log's format (records written
 * by an earlier version are read with it), so a column is only ever added at the end
 */
export const EVENT_COLUMNS = [
  { name: 'app_id', field: 'appId', kind: 'int' },
  { name: 'event_key', field: 'eventKey', kind: 'base64' },
  { name: 'received_at', field: 'receivedAt', kind: 'epochMs' },
  { name: 'occurred_at', field: 'occurredAt', kind: 'epochMs' },
  { name: 'day', field: 'day', kind: 'date' },
  { name: 'event_name', field: 'eventName', kind: 'text' },
  { name: 'session_id', field: 'sessionId', kind: 'uuid' },
  { name: 'user_key', field: 'userKey', kind: 'base64' },
  { name: 'is_premium', field: 'isPremium', kind: 'bool' },
  { name: 'is_success', field: 'isSuccess', kind: 'bool' },
  { name: 'platform', field: 'platform', kind: 'text' },
  { name: 'locale', field: 'locale', kind: 'text' },
  { name: 'start_param', field: 'startParam', kind: 'text' },
  { name: 'props', field: 'props', kind: 'jsonb' },
  { name: 'launch_check', field: 'launchCheck', kind: 'text' },
  { name: 'launch_day', field: 'launchDay', kind: 'date' },
  { name: 'launch_proof', field: 'launchProof', kind: 'base64' },
  { name: 'sent_by_server', field: 'sentByServer', kind: 'bool' },
] as const satisfies readonly { name: string; field: StoredField; kind: TupleKind }[];

/** the SQL reading a row's array */
export const EVENT_TUPLE = new JsonTuple(EVENT_COLUMNS);

/** the events table's column names, in the order of a row's array */
export const EVENT_COLUMN_NAMES = EVENT_COLUMNS.map((column) => column.name).join(', ');

/** a value as its column's array keeps it: times in epoch ms, keys in base64, nothing as null */
function encodeValue(kind: TupleKind, value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (kind === 'base64') return (value as Buffer).toString('base64');
  if (kind === 'epochMs') return (value as Date).getTime();
  return value;
}

/** a value from its column's array (null, or absent from a shorter array: nothing) */
function decodeValue(kind: TupleKind, value: unknown): unknown {
  if (value === undefined || value === null) return value === null ? null : undefined;
  if (kind === 'base64') return Buffer.from(value as string, 'base64');
  if (kind === 'epochMs') return new Date(value as number);
  return value;
}

/**
 * a row as the durable log and the event insert keep it: an array in the order of EVENT_COLUMNS, without the nulls at
 * its end (most events have no launch check), which read as null
 */
export function encodeEventRow(row: EventRow): unknown[] {
  const values = new Array<unknown>(EVENT_COLUMNS.length);
  let length = 0;
  for (let i = 0; i < EVENT_COLUMNS.length; i++) {
    const { field, kind } = EVENT_COLUMNS[i]!;
    values[i] = encodeValue(kind, row[field]);
    if (values[i] !== null) length = i + 1;
  }
  values.length = length;
  return values;
}

/** a row as encodeEventRow() wrote it */
export function decodeEventRow(values: readonly unknown[]): EventRow {
  const row: Partial<Record<StoredField, unknown>> = {};
  EVENT_COLUMNS.forEach(({ field, kind }, index) => {
    row[field] = decodeValue(kind, values[index]);
  });
  return row as EventRow;
}

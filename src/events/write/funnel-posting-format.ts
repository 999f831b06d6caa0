// Funnel postings: what a funnel reads of each step's events, kept per app, step and day as a few binary rows per
// commit, so a funnel reads a step's events as a range of rows, not an index entry each. The service writes them at
// ingest (one chunk per step, day, launch attributes, user and session of a request: mostly one per step), the loader
// joins a batch's chunks into one row per app, step and day, and a funnel decodes its steps' rows. This file is the
// format's one writer and reader.
import { customEventName, cutText } from '../custom-events.ts';
import type { EventRow } from './event-columns.ts';

/** how a custom event's name is told from the service's own event names where both share one column */
export const CUSTOM_STEP_PREFIX = 'custom-event:';

/** where a chunk's header keeps its fields, counted from the end of its texts: the premium flag first */
const USER_AT = 1;
const SESSION_AT = USER_AT + 16;
const COUNT_AT = SESSION_AT + 16;
const ENTRIES_AT = COUNT_AT + 4;

/** a request's step group names its day as ISO text (YYYY-MM-DD) after the step's 2-byte length and name */
export const DAY_BYTES = 10;

/** an entry: the event's time in its day (ms) and its key */
const ENTRY_BYTES = 4 + 16;
/** where an entry keeps the event's key */
const EVENT_KEY_AT = 4;

/** the launch attributes a chunk's events share, as the filters compare them ('' when absent, cut) */
interface ChunkAttributes {
  platform: string;
  locale: string;
  campaign: string;
  premium: boolean;
}

/**
 * One event of a step as a funnel reads it: its time, the person it counts for (a user's or a session's key, as
 * latin1 text) and where its entry is, whose key is read only when a funnel compares two events of one millisecond.
 */
export interface PostingEvent {
  /** epoch ms */
  at: number;
  person: string;
  bytes: Buffer;
  entryAt: number;
}

/** the event's key */
export const eventKeyOf = (event: PostingEvent) =>
  event.bytes.subarray(event.entryAt + EVENT_KEY_AT, event.entryAt + ENTRY_BYTES);

/** events in a person's order: by time, events of one millisecond by their keys */
export const byTime = (a: PostingEvent, b: PostingEvent) =>
  a.at - b.at ||
  a.bytes.compare(
    b.bytes,
    b.entryAt + EVENT_KEY_AT,
    b.entryAt + ENTRY_BYTES,
    a.entryAt + EVENT_KEY_AT,
    a.entryAt + ENTRY_BYTES,
  );

/** a step and day's events of a request that share their launch attributes, user and session */
interface Group {
  /** the step's name as a request's postings begin its group: stepBytes() */
  step: Buffer;
  day: string;
  dayStart: number;
  /** the chunk's header but its count */
  head: Buffer;
  rows: EventRow[];
}

/**
 * A chunk's header but its count: the attributes (each text as a 2-byte length and UTF-8, then the premium flag),
 * the user's key and the session
 */
function chunkHead(row: EventRow): Buffer {
  const texts = [row.platform, row.locale, row.startParam].map((text) => Buffer.from(cutText(text ?? ''), 'utf8'));
  const bytes = Buffer.allocUnsafe(texts.reduce((sum, text) => sum + 2 + text.length, 0) + COUNT_AT);
  let at = 0;
  for (const text of texts) {
    at = bytes.writeUInt16BE(text.length, at);
    at += text.copy(bytes, at);
  }
  bytes[at] = row.isPremium ? 1 : 0;
  bytes.set(row.userKey, at + USER_AT);
  bytes.write(row.sessionId.replaceAll('-', ''), at + SESSION_AT, 'hex');
  return bytes;
}

/** whether two rows share their launch attributes, user and session */
const samePerson = (a: EventRow, b: EventRow) =>
  a.sessionId === b.sessionId &&
  (a.userKey === b.userKey || a.userKey.equals(b.userKey)) &&
  a.platform === b.platform &&
  a.locale === b.locale &&
  a.startParam === b.startParam &&
  a.isPremium === b.isPremium;

/** a run of a request's rows of one day, launch attributes, user and session, with its groups by step */
interface Run {
  row: EventRow;
  head: Buffer;
  dayStart: number;
  /** by the event's name; a custom event's by its own name (no prefix made for each event) */
  steps: Map<string, Group>;
  customSteps: Map<string, Group>;
}

/** the bytes of step names met lately, by event name and by custom event name: most requests name the same few */
const stepNames = { events: new Map<string, Buffer>(), custom: new Map<string, Buffer>() };
/** names kept at most, per kind: a noisy app's ever new names do not grow the cache without bound */
const STEP_NAMES_KEPT = 1_000;

/** a step's name as a request's postings begin its group: 2-byte length, then UTF-8 (a custom event's prefixed) */
function stepBytes(name: string, custom: boolean): Buffer {
  const names = custom ? stepNames.custom : stepNames.events;
  let bytes = names.get(name);
  if (!bytes) {
    const text = Buffer.from(custom ? CUSTOM_STEP_PREFIX + name : name, 'utf8');
    bytes = Buffer.alloc(2 + text.length);
    bytes.writeUInt16BE(text.length);
    text.copy(bytes, 2);
    if (names.size >= STEP_NAMES_KEPT) names.clear();
    names.set(name, bytes);
  }
  return bytes;
}

/** a row's launch attributes, user and session as one string */
const personKey = (row: EventRow) =>
  JSON.stringify([
    row.sessionId,
    row.userKey.toString('base64'),
    row.platform,
    row.locale,
    row.startParam,
    row.isPremium,
  ]);

/**
 * A request's postings, as its log record keeps them: for each step and day (and launch attributes, user and
 * session), the step's name (2-byte length, UTF-8), the day (10 ASCII characters) and the chunk: its header, a 4-byte
 * count, then the entries. A request is mostly one user's session: its rows share their day, attributes, user and
 * session, so those are encoded once per run of such rows, not per row.
 */
export function encodeRequestPostings(rows: EventRow[]): Buffer {
  /** per day, attributes, user and session met, its groups by step; the chunk headers by person */
  const runs = new Map<string, Run>();
  const heads = new Map<string, Buffer>();
  const groups: Group[] = [];
  let size = 0;
  let run: Run | undefined;
  for (const row of rows) {
    // a request's rows mostly follow the previous row's run; other runs are found by key
    if (!run || run.row.day !== row.day || !samePerson(run.row, row)) {
      const person = personKey(row);
      run = runs.get(`${row.day} ${person}`);
      if (!run) {
        let head = heads.get(person);
        if (!head) heads.set(person, (head = chunkHead(row)));
        const dayStart = Date.parse(row.day);
        runs.set(`${row.day} ${person}`, (run = { row, head, dayStart, steps: new Map(), customSteps: new Map() }));
      }
    }
    const custom = row.eventName === 'custom-event';
    const key = custom ? customEventName(row.props) : row.eventName;
    const steps = custom ? run.customSteps : run.steps;
    let group = steps.get(key);
    if (!group) {
      const step = stepBytes(key, custom);
      group = { step, day: row.day, dayStart: run.dayStart, head: run.head, rows: [] };
      steps.set(key, group);
      groups.push(group);
      size += step.length + DAY_BYTES + run.head.length + 4;
    }
    group.rows.push(row);
    size += ENTRY_BYTES;
  }
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const group of groups) {
    bytes.set(group.step, at);
    at += group.step.length;
    at += bytes.write(group.day, at, 'latin1');
    bytes.set(group.head, at);
    at += group.head.length;
    at = bytes.writeUInt32BE(group.rows.length, at);
    for (const row of group.rows) {
      at = bytes.writeUInt32BE(row.occurredAt.getTime() - group.dayStart, at);
      bytes.set(row.eventKey, at);
      at += 16;
    }
  }
  return bytes;
}

/** a chunk as read: its attributes, where its user's key and session are, and where its entries are */
interface Chunk {
  attributes: ChunkAttributes;
  userAt: number;
  sessionAt: number;
  /** its first entry's byte */
  entriesAt: number;
  count: number;
}

/** the chunk starting at `at` */
function chunkAt(bytes: Buffer, at: number): Chunk {
  const texts: string[] = [];
  for (let text = 0; text < 3; text++) {
    const length = bytes.readUInt16BE(at);
    texts.push(bytes.toString('utf8', at + 2, at + 2 + length));
    at += 2 + length;
  }
  const [platform, locale, campaign] = texts as [string, string, string];
  return {
    attributes: { platform, locale, campaign, premium: bytes[at] === 1 },
    userAt: at + USER_AT,
    sessionAt: at + SESSION_AT,
    entriesAt: at + ENTRIES_AT,
    count: bytes.readUInt32BE(at + COUNT_AT),
  };
}

/** the byte after the chunk starting at `at`, its texts skipped, not read */
export function chunkEnd(bytes: Buffer, at: number): number {
  for (let text = 0; text < 3; text++) at += 2 + bytes.readUInt16BE(at);
  return at + ENTRIES_AT + bytes.readUInt32BE(at + COUNT_AT) * ENTRY_BYTES;
}

/** every chunk of a postings row (or of a request's step), in order */
export function* chunksOf(bytes: Buffer): Generator<Chunk> {
  for (let at = 0; at < bytes.length; ) {
    const chunk = chunkAt(bytes, at);
    yield chunk;
    at = chunk.entriesAt + chunk.count * ENTRY_BYTES;
  }
}

/** entry `index` of a chunk: the event's time in its day (ms) and its key */
export function entryBytes(bytes: Buffer, chunk: Chunk, index: number): Buffer {
  const at = chunk.entriesAt + index * ENTRY_BYTES;
  return bytes.subarray(at, at + ENTRY_BYTES);
}

/** the filter's attributes a chunk must have (absent: any), as the service's Filter names them */
export interface AttributeFilter {
  platform?: string;
  language?: string;
  premium?: boolean;
  campaign?: string;
  /** only the chunks of these users (user keys as latin1 strings) */
  users?: ReadonlySet<string>;
}

/** the filter's texts as a chunk's header holds them (cut, UTF-8), compared there byte by byte */
interface HeaderFilter {
  texts: (Buffer | undefined)[];
  premium?: boolean;
}

const headerFilter = (filter: AttributeFilter): HeaderFilter => ({
  texts: [filter.platform, filter.language, filter.campaign].map((text) =>
    text === undefined ? undefined : Buffer.from(cutText(text), 'utf8'),
  ),
  premium: filter.premium,
});

/**
 * Visits the events of a postings row (one day's) whose chunk has the filter's attributes (and user), each counted for its user
 * or its session (of `persons` only, when given), as the fields of a PostingEvent: the caller makes objects of those it
 * keeps. `day` is the row's day, entries' times count from its start. A row holds a chunk per request, step and
 * person, often of one event: a chunk's header is compared as bytes and only its person made a string.
 */
export function decodePostings(
  bytes: Buffer,
  day: string,
  filter: AttributeFilter,
  by: 'user' | 'session',
  visit: (at: number, person: string, bytes: Buffer, entryAt: number) => void,
  persons?: ReadonlyMap<string, unknown>,
): void {
  const dayStart = Date.parse(day);
  const wanted = headerFilter(filter);
  for (let at = 0; at < bytes.length; ) {
    let kept = true;
    for (const text of wanted.texts) {
      const length = bytes.readUInt16BE(at);
      if (text && (text.length !== length || text.compare(bytes, at + 2, at + 2 + length) !== 0)) kept = false;
      at += 2 + length;
    }
    if (wanted.premium !== undefined && (bytes[at] === 1) !== wanted.premium) kept = false;
    const count = bytes.readUInt32BE(at + COUNT_AT);
    const entriesAt = at + ENTRIES_AT;
    const userAt = at + USER_AT;
    const personAt = at + (by === 'user' ? USER_AT : SESSION_AT);
    at = entriesAt + count * ENTRY_BYTES;
    if (!kept) continue;
    if (filter.users && !filter.users.has(bytes.toString('latin1', userAt, userAt + 16))) continue;
    const person = bytes.toString('latin1', personAt, personAt + 16);
    if (persons && !persons.has(person)) continue;
    for (let entryAt = entriesAt; entryAt < at; entryAt += ENTRY_BYTES)
      visit(dayStart + bytes.readUInt32BE(entryAt), person, bytes, entryAt);
  }
}

/** a postings row without the chunks of one user (the same bytes when it has none); null when nothing remains */
export function withoutUser(bytes: Buffer, userKey: Buffer): Buffer | null {
  const kept: Buffer[] = [];
  let removed = false;
  let start = 0;
  for (const chunk of chunksOf(bytes)) {
    const end = chunk.entriesAt + chunk.count * ENTRY_BYTES;
    if (userKey.compare(bytes, chunk.userAt, chunk.userAt + 16) === 0) removed = true;
    else kept.push(bytes.subarray(start, end));
    start = end;
  }
  if (!removed) return bytes;
  return kept.length === 0 ? null : Buffer.concat(kept);
}

/** the number of entries of a postings row */
export function entryCount(bytes: Buffer): number {
  let entries = 0;
  for (const chunk of chunksOf(bytes)) entries += chunk.count;
  return entries;
}

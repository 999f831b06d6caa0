// The event plane: inserts accepted events and maintains rollups in the same statement; reads activity.
// Behind this interface a columnar engine could be added as a second implementation.
import crypto from 'node:crypto';
import { named, numbered, type NumberedStatement, valuesOf } from '../../db/named-sql.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { intArrayLiteral, type SqlReader, type SqlRunner } from '../../db/sql.ts';
import { dayNumberOf, isoDayOfNumber } from '../days.ts';
import { GatheredSections } from './rollups/gathering.ts';
import { gatheringsOf } from './rollups/index.ts';
import { decodeEventRow, EVENT_TUPLE, encodeEventRow, type EventRow } from './event-columns.ts';
import { type EventBatch, insertEventsSql, insertValues } from './insert-statement.ts';

export { EVENT_PLANE_TABLES } from './rollups/index.ts';
export type { EventBatch, EventRow };

export interface AppActivity {
  lastEventAt: Date | null;
  eventsTotal: number;
}

export interface RejectionRow {
  appId: number;
  at: Date;
  status: number;
  message: string;
  origin: string | null;
  /** what the owner is told beyond the spec's message (a quota reached, say); null or absent: nothing more */
  reason?: string | null;
  count: number;
}

export interface EventPlane {
  /** stores the rows not stored before (same app and event key) and counts them into the rollups */
  insert(rows: EventRow[]): Promise<number>;
  /** the same for a batch read from a node's durable log, with the log's offset in the same commit */
  insertBatch(batch: EventBatch): Promise<number>;
  /** how far the store holds a node's log (0: nothing of it) */
  loadedThrough(node: string): Promise<number>;
  /** the apps' activity, in one read however many apps (a list of every app stays one read) */
  activities(appIds: readonly number[]): Promise<Map<number, AppActivity>>;
  addRejections(rows: RejectionRow[]): Promise<void>;
  recentRejections(appId: number, limit: number): Promise<RejectionRow[]>;
  /** each app's last refused request (the apps without one are absent), in one read */
  lastRejections(appIds: readonly number[]): Promise<Map<number, RejectionRow>>;
}

/** rejections kept per app: enough to explain "No data", small enough to never matter */
const REJECTIONS_KEPT = 50;

/** the rows' events and bytes per app and UTC day of receipt */
function dailyUsage(rows: EventRow[]): [number, string, number, number][] {
  const usage = new Map<string, [number, number, number, number]>();
  let entry: [number, number, number, number] | undefined;
  for (const row of rows) {
    const day = dayNumberOf(row.receivedAt.getTime());
    // a request's rows come one after another with the same app and time
    if (entry?.[0] !== row.appId || entry[1] !== day) {
      const key = `${row.appId}:${day}`;
      entry = usage.get(key);
      if (!entry) usage.set(key, (entry = [row.appId, day, 0, 0]));
    }
    entry[2]++;
    entry[3] += row.bytes ?? 0;
  }
  return [...usage.values()].map(([appId, day, events, bytes]) => [appId, isoDayOfNumber(day), events, bytes]);
}

/**
 * The event insert runs as a named statement, planned once per connection: planning this statement costs more
 * than running it for a small batch, on PostgreSQL and more so on PGlite. The name carries a hash of the text,
 * so a changed statement is prepared anew.
 */
const statementName = (text: string) =>
  `tma_insert_events_${crypto.createHash('sha256').update(text).digest('hex').slice(0, 12)}`;

export interface SqlEventPlaneOptions {
  /** maintain the insights' aggregates (default); false only to measure what they cost */
  insights?: boolean;
  /** what the surfaces read (an app's activity, its refusals): within the read budget (default: the runner) */
  reads?: SqlReader;
}

/** an event as the store keys it */
const eventKeyOf = (appId: number, eventKey: Uint8Array) => `${appId} ${Buffer.from(eventKey).toString('base64')}`;

export class SqlEventPlane implements EventPlane {
  private readonly insights: boolean;
  /** the last batch held an event stored before */
  private replaysSeen = false;
  private readonly insertStatement: NumberedStatement;
  private readonly insertName: string;
  private readonly reads: SqlReader;

  constructor(
    private readonly sql: SqlRunner,
    options: SqlEventPlaneOptions = {},
  ) {
    this.insights = options.insights ?? true;
    this.reads = options.reads ?? sql;
    this.insertStatement = numbered(insertEventsSql(this.insights));
    this.insertName = statementName(this.insertStatement.text);
  }

  async insert(rows: EventRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    return this.insertBatch({
      ...this.rowsAndGatherings(rows),
      appIds: new Set(rows.map((row) => row.appId)),
      usage: dailyUsage(rows),
    });
  }

  /**
   * The statement stores a batch whole or not at all (src/events/write/insert-statement.ts): a batch holding an event
   * stored before (a client's retry, a commit of another node) or twice is sent again without it, until the store
   * takes it. A statement refused costs about what one stored does: after a batch that held an event stored before
   * (a client replaying events sends more), the next is checked first, until one holds none.
   */
  async insertBatch(batch: EventBatch): Promise<number> {
    if (this.replaysSeen) {
      // a store that was down holds clients' retries beside their originals: repeats within the batch go too
      const fresh = await this.withoutStoredEvents(batch);
      this.replaysSeen = fresh !== undefined;
      batch = fresh ?? batch;
    }
    for (;;) {
      try {
        const [result] = await this.sql.query<{ inserted: number }>(
          this.insertStatement.text,
          valuesOf(this.insertStatement, insertValues(batch)),
          { name: this.insertName },
        );
        return result?.inserted ?? 0;
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        const fresh = await this.withoutStoredEvents(batch);
        // a violation no event of the batch explains is not one sending it again would mend
        if (!fresh) throw error;
        this.replaysSeen = true;
        batch = fresh;
      }
    }
  }

  /**
   * The batch without the events the store holds and its repeats (the first of an event in the batch stays), its
   * gatherings made anew from the rows left; its quota counts unchanged (they count what was admitted). Undefined
   * when it holds neither.
   */
  private async withoutStoredEvents(batch: EventBatch): Promise<EventBatch | undefined> {
    const rows = (JSON.parse(batch.rows.toString('utf8')) as unknown[][]).map(decodeEventRow);
    // only each row's app and key travel, as the first two places of a row's array
    const stored = await this.sql.query<{ app_id: number; event_key: Uint8Array }>(
      ...named(
        `SELECT e.app_id, e.event_key FROM jsonb_array_elements({{keys}}::jsonb) AS r
         JOIN events e ON e.app_id = ${EVENT_TUPLE.get('r', 'app_id')} AND e.event_key = ${EVENT_TUPLE.get('r', 'event_key')}`,
        { keys: JSON.stringify(rows.map((row) => encodeEventRow(row).slice(0, 2))) },
      ),
    );
    const seen = new Set(stored.map((row) => eventKeyOf(row.app_id, row.event_key)));
    const fresh = rows.filter((row) => {
      const key = eventKeyOf(row.appId, row.eventKey);
      return !seen.has(key) && seen.add(key);
    });
    if (fresh.length === rows.length) return undefined;
    return { ...batch, ...this.rowsAndGatherings(fresh) };
  }

  /** rows as the event insert takes them, with what each gathering makes of each app's rows */
  private rowsAndGatherings(rows: EventRow[]): Pick<EventBatch, 'rows' | 'gathered'> {
    const gathered = new GatheredSections(gatheringsOf(this.insights));
    const byApp = new Map<number, EventRow[]>();
    for (const row of rows) byApp.get(row.appId)?.push(row) ?? byApp.set(row.appId, [row]);
    for (const [appId, appRows] of byApp) gathered.add(appId, (gathering) => gathering.encode(appRows, this.insights));
    return { rows: Buffer.from(JSON.stringify(rows.map(encodeEventRow))), gathered: gathered.values() };
  }

  async loadedThrough(node: string): Promise<number> {
    const [row] = await this.sql.query<{ through: number }>(
      ...named(`SELECT loaded_through::float8 AS through FROM log_offsets WHERE node = {{node}}`, { node }),
    );
    return row?.through ?? 0;
  }

  async activities(appIds: readonly number[]): Promise<Map<number, AppActivity>> {
    const rows = await this.reads.query<{ app_id: number; last_event_at: Date; events_total: number }>(
      ...named(
        `SELECT app_id, last_event_at, events_total::float8 AS events_total FROM app_activity
         WHERE app_id = ANY({{app_ids}}::int[])`,
        { app_ids: intArrayLiteral(new Set(appIds)) },
      ),
    );
    const found = new Map(rows.map((row) => [row.app_id, row]));
    return new Map(
      appIds.map((appId) => {
        const row = found.get(appId);
        return [appId, { lastEventAt: row?.last_event_at ?? null, eventsTotal: row?.events_total ?? 0 }];
      }),
    );
  }

  async addRejections(rows: RejectionRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.sql.transaction(async (tx) => {
      await tx.query(
        ...named(
          `INSERT INTO rejections (app_id, at, status, message, origin, reason, count)
           SELECT app_id, at, status, message, origin, reason, count FROM jsonb_to_recordset({{rows}}::jsonb)
             AS r(app_id int, at timestamptz, status int, message text, origin text, reason text, count int)`,
          { rows: JSON.stringify(rows.map((row) => ({ ...row, app_id: row.appId, reason: row.reason ?? null }))) },
        ),
      );
      await tx.query(
        ...named(
          `DELETE FROM rejections r USING (
             SELECT id, row_number() OVER (PARTITION BY app_id ORDER BY at DESC, id DESC) AS rank
             FROM rejections WHERE app_id = ANY({{app_ids}}::int[])) AS ranked
           WHERE r.id = ranked.id AND ranked.rank > ${REJECTIONS_KEPT}`,
          { app_ids: intArrayLiteral(new Set(rows.map((row) => row.appId))) },
        ),
      );
    });
  }

  async recentRejections(appId: number, limit: number): Promise<RejectionRow[]> {
    const rows = await this.reads.query<{
      at: Date;
      status: number;
      message: string;
      origin: string | null;
      reason: string | null;
      count: number;
    }>(
      ...named(
        `SELECT at, status, message, origin, reason, count FROM rejections WHERE app_id = {{app}}
         ORDER BY at DESC, id DESC LIMIT {{limit}}`,
        { app: appId, limit },
      ),
    );
    return rows.map((row) => ({ appId, ...row }));
  }

  async lastRejections(appIds: readonly number[]): Promise<Map<number, RejectionRow>> {
    const rows = await this.reads.query<RejectionRow & { app_id: number }>(
      ...named(
        `SELECT DISTINCT ON (app_id) app_id, at, status, message, origin, reason, count FROM rejections
         WHERE app_id = ANY({{app_ids}}::int[]) ORDER BY app_id, at DESC, id DESC`,
        { app_ids: intArrayLiteral(new Set(appIds)) },
      ),
    );
    return new Map(rows.map(({ app_id, ...row }) => [app_id, { ...row, appId: app_id }]));
  }
}

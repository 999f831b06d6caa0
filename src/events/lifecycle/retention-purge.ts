// Deletes what apps with a retention period keep no longer, in the background, a bounded chunk per statement.
import { named } from '../../db/named-sql.ts';
import { reclaimDeletedSpace } from '../../db/embedded/reclaim.ts';
import type { SqlRunner } from '../../db/sql.ts';
import { CHUNK_ROWS } from './deleted-app-purge.ts';
import { firstKeptDay } from './retention.ts';
import { EVENT_PLANE_TABLE_LIST } from '../write/rollups/index.ts';

/** how often the purge runs (and once at start): a day is the retention's unit, an hour keeps it within one */
export const RETENTION_PURGE_EVERY_MS = 3_600_000;

/**
 * What the purge deletes of an app's rows counted before its first kept day, as each table of the event plane declares
 * it (src/events/write/rollups/): whatever names a user or a session goes (events, per-user rows, per-session rows),
 * since it is personal data; the anonymous counts stay, so totals of old periods still show. One step per condition,
 * in the order of the list (a condition may read a table an earlier step purged).
 *
 * Parameters: app, rows (the chunk's), and the first kept day as a day, a time and an event key's prefix (first_kept_day,
 * first_kept_at, first_kept_key). Each condition is checked again on the row the DELETE locks, so a row a commit just
 * refreshed (a user seen again today) is left alone.
 */
interface PurgeStep {
  table: string;
  condition: string;
}

const STEPS: PurgeStep[] = EVENT_PLANE_TABLE_LIST.flatMap(({ name, retention }) =>
  retention.kind === 'deleted' ? retention.when.map((condition) => ({ table: name, condition })) : [],
);

/** the tables the purge deletes from, each once */
export const RETENTION_PURGED_TABLES = [...new Set(STEPS.map((step) => step.table))];

const deleteChunk = ({ table, condition }: PurgeStep) => `
WITH gone AS (
  DELETE FROM ${table} t WHERE t.ctid = ANY(ARRAY(
    SELECT ctid FROM ${table} t WHERE t.app_id = {{app}} AND ${condition} LIMIT {{rows}}
  )) AND t.app_id = {{app}} AND ${condition}
  RETURNING 1
)
SELECT count(*)::int AS n FROM gone`;

const APPS_WITH_RETENTION = `SELECT id, retention_days FROM apps WHERE retention_days IS NOT NULL ORDER BY id`;

/** rows deleted per table */
export type PurgedRows = Record<string, number>;

export interface RetentionPurgerOptions {
  /** rows per statement (default: per engine, as for deleted apps) */
  chunkRows?: number;
  now?: () => Date;
}

export class RetentionPurger {
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly chunkRows: number;
  private readonly now: () => Date;

  constructor(
    private readonly sql: SqlRunner,
    private readonly onError: (error: unknown) => void = () => {},
    options: RetentionPurgerOptions = {},
  ) {
    this.chunkRows = options.chunkRows ?? CHUNK_ROWS[sql.kind];
    this.now = options.now ?? (() => new Date());
  }

  /** purges now, then every `everyMs` until stopped; a run starts only after the one before it ended */
  start(everyMs: number = RETENTION_PURGE_EVERY_MS): void {
    const run = () => {
      this.timer = undefined;
      void this.purgeExpired().finally(() => {
        if (this.stopped) return;
        this.timer = setTimeout(run, everyMs);
        this.timer.unref();
      });
    };
    run();
  }

  /**
   * One pass over every app with a retention period, after the pass in progress; resolves with the rows it
   * deleted. Failures are reported, not thrown: the next pass resumes, as the rule needs no state of its own.
   */
  purgeExpired(): Promise<PurgedRows> {
    const pass = this.running.then(async () => {
      const purged: PurgedRows = Object.fromEntries(RETENTION_PURGED_TABLES.map((table) => [table, 0]));
      try {
        const apps = await this.sql.query<{ id: number; retention_days: number }>(APPS_WITH_RETENTION);
        for (const app of apps) await this.purgeApp(app.id, app.retention_days, purged);
        if (!this.stopped)
          await reclaimDeletedSpace(
            this.sql,
            RETENTION_PURGED_TABLES.filter((table) => purged[table]! > 0),
          );
      } catch (error) {
        this.onError(error);
      }
      return purged;
    });
    this.running = pass;
    return pass;
  }

  /** resolves when no pass is running */
  async idle(): Promise<void> {
    await this.running;
  }

  /** stops after the statement in progress; the next start resumes */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private async purgeApp(appId: number, days: number, purged: PurgedRows): Promise<void> {
    const day = firstKeptDay(days, this.now());
    const at = new Date(`${day}T00:00:00Z`);
    // an event's key starts with its time in ms as 12 hex digits
    const values = {
      app: appId,
      rows: this.chunkRows,
      first_kept_day: day,
      first_kept_at: at.toISOString(),
      first_kept_key: at.getTime().toString(16).padStart(12, '0'),
    };
    for (const step of STEPS) {
      const text = deleteChunk(step);
      for (;;) {
        if (this.stopped) return;
        const [{ n }] = (await this.sql.query<{ n: number }>(...named(text, values))) as [{ n: number }];
        purged[step.table] = (purged[step.table] ?? 0) + n;
        if (n < this.chunkRows) break;
      }
    }
  }
}

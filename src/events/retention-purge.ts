// Deletes what apps with a retention period keep no longer, in the background, a bounded chunk per statement.
import { reclaimDeletedSpace } from '../db/reclaim.ts';
import type { SqlRunner } from '../db/sql.ts';
import { CHUNK_ROWS } from './purge.ts';
import { firstKeptDay } from './retention.ts';

/** how often the purge runs (and once at start): a day is the retention's unit, an hour keeps it within one */
export const RETENTION_PURGE_EVERY_MS = 3_600_000;

/**
 * What the purge deletes, in this order, of an app's rows counted before its first kept day. The rule: whatever
 * names a user or a session goes (events, per-user rows, per-session rows), since it is personal data; the
 * anonymous counts stay, so totals of old periods still show (daily_event_counts, daily_app_stats,
 * daily_dimensions, daily_custom_events, daily_custom_values, daily_app_usage, app_activity, custom_catalog).
 * Funnel postings go with the events of their days. A user's own rows (app_users, wallet_users) go when the user
 * was last seen before the period; a user still active keeps them, first day included.
 *
 * Parameters: $1 the app, $2 the chunk's rows, then the step's own. Each condition is checked again on the row
 * the DELETE locks, so a row a commit just refreshed (a user seen again today) is left alone.
 */
interface PurgeStep {
  table: string;
  condition: string;
  params(firstKept: { day: string; at: Date }): unknown[];
}

const beforeDay = (column: string): PurgeStep['condition'] => `t.${column} < $3::date`;
const dayParam: PurgeStep['params'] = ({ day }) => [day];

const STEPS: PurgeStep[] = [
  // An event's key starts with the client's time (src/events/pseudonym.ts), its day is that time's when the
  // service trusted it, else the time of receipt; no index has the day, so two index ranges cover every old
  // event: keys before the first kept day (trusted client times, and receipts without one), and receipts before it.
  {
    table: 'events',
    condition: `t.event_key < decode($3, 'hex') AND t.day < $4::date`,
    params: ({ day, at }) => [at.getTime().toString(16).padStart(12, '0'), day],
  },
  {
    table: 'events',
    condition: `t.received_at < $3::timestamptz AND t.day < $4::date`,
    params: ({ day, at }) => [at.toISOString(), day],
  },
  // an event is before the first kept day exactly when its day is, whichever of the two ranges above held it
  { table: 'funnel_postings', condition: beforeDay('day'), params: dayParam },
  { table: 'daily_funnel_sessions', condition: beforeDay('day'), params: dayParam },
  // daily_sessions has no index by day: a chunk reads the app's sessions until it has found its rows
  { table: 'daily_sessions', condition: beforeDay('day'), params: dayParam },
  { table: 'daily_users', condition: beforeDay('day'), params: dayParam },
  { table: 'app_users', condition: beforeDay('last_day'), params: dayParam },
  // after app_users: a wallet user is still active exactly when their app_users row remains
  {
    table: 'wallet_users',
    condition: `t.first_day < $3::date AND NOT EXISTS (SELECT 1 FROM app_users u WHERE u.app_id = t.app_id AND u.user_key = t.user_key)`,
    params: dayParam,
  },
];

/** the tables the purge deletes from, each once */
export const RETENTION_PURGED_TABLES = [...new Set(STEPS.map((step) => step.table))];

const deleteChunk = ({ table, condition }: PurgeStep) => `
WITH gone AS (
  DELETE FROM ${table} t WHERE t.ctid = ANY(ARRAY(
    SELECT ctid FROM ${table} t WHERE t.app_id = $1 AND ${condition} LIMIT $2
  )) AND t.app_id = $1 AND ${condition}
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
    const firstKept = { day, at: new Date(`${day}T00:00:00Z`) };
    for (const step of STEPS) {
      const text = deleteChunk(step);
      const params = [appId, this.chunkRows, ...step.params(firstKept)];
      for (;;) {
        if (this.stopped) return;
        const [{ n }] = (await this.sql.query<{ n: number }>(text, params)) as [{ n: number }];
        purged[step.table] = (purged[step.table] ?? 0) + n;
        if (n < this.chunkRows) break;
      }
    }
  }
}

// The service's own autovacuum: ANALYZE (and VACUUM where no autovacuum runs) of each table whose changes crossed a threshold.
import type { SqlRunner } from './sql.ts';

/**
 * When a table is due, as PostgreSQL's autovacuum decides it (its default settings): changes since the last analyse
 * beyond a floor plus a share of the table's rows; dead rows, or rows inserted since the last vacuum, likewise.
 */
export interface MaintenanceThresholds {
  analyseFloor: number;
  analyseScale: number;
  vacuumFloor: number;
  vacuumScale: number;
  /** inserts alone call for a vacuum too: it marks pages all-visible, which index-only scans need */
  insertVacuumFloor: number;
  insertVacuumScale: number;
}

export const AUTOVACUUM_THRESHOLDS: MaintenanceThresholds = {
  analyseFloor: 50,
  analyseScale: 0.1,
  vacuumFloor: 50,
  vacuumScale: 0.2,
  insertVacuumFloor: 1000,
  insertVacuumScale: 0.2,
};

/**
 * The store's counters are per table and cover every writer (loader, purges, erasure, several nodes). Each table's
 * file size is compared with the size its last analyse saw too: PGlite forgets its counters at a restart, and a
 * table that grew before it is then still found.
 */
const TABLES = `
SELECT c.relname AS name,
       c.reltuples::float8 AS tuples,
       c.relpages::float8 AS pages,
       (pg_relation_size(c.oid) / current_setting('block_size')::int)::float8 AS current_pages,
       coalesce(s.n_mod_since_analyze, 0)::float8 AS changed,
       coalesce(s.n_dead_tup, 0)::float8 AS dead,
       coalesce(s.n_ins_since_vacuum, 0)::float8 AS inserted,
       EXISTS (SELECT 1 FROM pg_stats st WHERE st.schemaname = n.nspname AND st.tablename = c.relname) AS analysed,
       (current_setting('autovacuum') = 'on' AND current_setting('track_counts') = 'on' AND NOT EXISTS (
         SELECT 1 FROM unnest(c.reloptions) o WHERE o ~* '^autovacuum_enabled=(off|false|no|0|f|n)$'
       )) AS autovacuum
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
WHERE n.nspname = current_schema() AND c.relkind = 'r'
ORDER BY c.relname`;

interface TableState {
  name: string;
  tuples: number;
  pages: number;
  current_pages: number;
  changed: number;
  dead: number;
  inserted: number;
  /** the planner has statistics of its columns (an analyse of an empty table leaves none) */
  analysed: boolean;
  autovacuum: boolean;
}

/** what one pass did to a table */
export interface TableMaintained {
  table: string;
  statement: string;
  seconds: number;
}

export interface TableMaintenanceOptions {
  /** the least time between two passes: PostgreSQL publishes a connection's counters about once a second */
  checkEveryMs?: number;
  thresholds?: MaintenanceThresholds;
  onError?: (error: unknown, what: string) => void;
  onMaintained?: (done: TableMaintained) => void;
}

const RETRY_FAILED_AFTER_MS = 600_000;

/** a table name as the catalog gives it, quoted for a statement */
const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** the statement a table is due for, if any */
export function maintenanceDue(
  table: TableState,
  kind: SqlRunner['kind'],
  limits: MaintenanceThresholds = AUTOVACUUM_THRESHOLDS,
): string | null {
  // a server's autovacuum does it; PGlite runs none, and a server may have it off (for the table or entirely)
  if (kind === 'server' && table.autovacuum) return null;
  const rows = Math.max(table.tuples, 0);
  // rows the planner has no statistics of: a new table's first rows, or a table a restart found grown
  const unknown = !table.analysed && table.current_pages > 0 && (table.tuples !== 0 || table.changed > 0);
  const analyse =
    table.tuples < 0 ||
    unknown ||
    table.changed > limits.analyseFloor + limits.analyseScale * rows ||
    Math.abs(table.current_pages - table.pages) > 8 + limits.analyseScale * table.pages;
  const vacuum =
    table.dead > limits.vacuumFloor + limits.vacuumScale * rows ||
    table.inserted > limits.insertVacuumFloor + limits.insertVacuumScale * rows;
  if (vacuum) return analyse ? `VACUUM (ANALYZE) ${quoted(table.name)}` : `VACUUM ${quoted(table.name)}`;
  return analyse ? `ANALYZE ${quoted(table.name)}` : null;
}

export class TableMaintenance {
  private running: Promise<TableMaintained[]> = Promise.resolve([]);
  private timer: NodeJS.Timeout | undefined;
  private lastPassAt = -Infinity;
  private stopped = false;
  private readonly checkEveryMs: number;
  /** tables whose statement failed, left alone until then (a statement timeout would fail again at every pass) */
  private readonly failedUntil = new Map<string, number>();

  constructor(
    private readonly sql: SqlRunner,
    private readonly options: TableMaintenanceOptions = {},
  ) {
    this.checkEveryMs = options.checkEveryMs ?? 5_000;
  }

  /** a pass now: tables never analysed, or changed while the service was stopped */
  start(): void {
    void this.pass();
  }

  /**
   * Tables changed (a commit, a purge): a pass follows within checkEveryMs. Never waits: the statements run after
   * the caller's, one table at a time, so a commit waits for at most one of them.
   */
  changed(): void {
    if (this.timer || this.stopped) return;
    const wait = Math.max(0, this.lastPassAt + this.checkEveryMs - performance.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.pass();
    }, wait);
    this.timer.unref();
  }

  /** one pass over every table, after the pass in progress; resolves with what it did. Failures are reported. */
  pass(): Promise<TableMaintained[]> {
    const pass = this.running.then(async () => {
      this.lastPassAt = performance.now();
      const done: TableMaintained[] = [];
      if (this.stopped) return done;
      let tables: TableState[];
      try {
        // a connection publishes its counters at most once a second, after a statement: this one publishes them now
        // (PostgreSQL 15 and later; before it, they are at most a second old anyway)
        await this.sql.query('SELECT pg_stat_force_next_flush()').catch(() => undefined);
        tables = await this.sql.query<TableState>(TABLES);
      } catch (error) {
        this.options.onError?.(error, 'reading table statistics failed');
        return done;
      }
      for (const table of tables) {
        const statement = maintenanceDue(table, this.sql.kind, this.options.thresholds);
        if (!statement || this.stopped || (this.failedUntil.get(table.name) ?? 0) > performance.now()) continue;
        const started = performance.now();
        try {
          await this.sql.query(statement);
        } catch (error) {
          this.failedUntil.set(table.name, performance.now() + RETRY_FAILED_AFTER_MS);
          this.options.onError?.(
            error,
            `${statement} failed; tried again in ${RETRY_FAILED_AFTER_MS / 60_000} minutes`,
          );
          continue;
        }
        const maintained = { table: table.name, statement, seconds: (performance.now() - started) / 1000 };
        done.push(maintained);
        this.options.onMaintained?.(maintained);
      }
      return done;
    });
    this.running = pass;
    return pass;
  }

  /** resolves when no pass runs */
  async idle(): Promise<void> {
    await this.running;
  }

  /** stops after the statement in progress */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }
}

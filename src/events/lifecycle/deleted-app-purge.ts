// Removes the events and rollups of deleted apps in the background, a bounded chunk per statement, resuming after a restart.
import { named } from '../../db/named-sql.ts';
import { reclaimDeletedSpace } from '../../db/embedded/reclaim.ts';
import type { SqlRunner } from '../../db/sql.ts';
import { EVENT_PLANE_TABLES } from '../write/event-plane.ts';

/**
 * Rows deleted per statement: each takes ~0.1–0.2 s, far inside the server's statement timeout (one DELETE of
 * an app's 6M events outlasted its 5 s), and event commits run in between (PGlite runs one statement at a time).
 */
export const CHUNK_ROWS = { server: 20_000, embedded: 5_000 } as const;

/** app_activity (one row per app that has events) goes last: while it remains, the app's purge is unfinished */
const PURGE_ORDER = [...EVENT_PLANE_TABLES.filter((table) => table !== 'app_activity'), 'app_activity'];

const DELETED_APPS_WITH_ROWS = `SELECT a.app_id FROM app_activity a WHERE NOT EXISTS (SELECT 1 FROM apps p WHERE p.id = a.app_id)`;

/** one chunk of a table's rows of an app, only if the app row is gone */
const deleteChunk = (table: string) => `
WITH gone AS (
  DELETE FROM ${table} WHERE ctid = ANY(ARRAY(
    SELECT ctid FROM ${table} WHERE app_id = {{app}} AND NOT EXISTS (SELECT 1 FROM apps WHERE id = {{app}}) LIMIT {{rows}}
  ))
  RETURNING 1
)
SELECT count(*)::int AS n FROM gone`;

export class DeletedAppPurger {
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly sql: SqlRunner,
    private readonly onError: (error: unknown) => void = () => {},
    private readonly chunkRows: number = CHUNK_ROWS[sql.kind],
  ) {}

  /**
   * Purges every app whose row is gone but whose rows remain: just deleted, or cut short by a stop. Runs
   * after the purge in progress; resolves when done. Failures are reported, not thrown (the next run resumes).
   */
  purgeDeletedApps(): Promise<void> {
    this.running = this.running.then(async () => {
      try {
        const apps = await this.sql.query<{ app_id: number }>(DELETED_APPS_WITH_ROWS);
        for (const { app_id } of apps) await this.purge(app_id);
        if (apps.length > 0 && !this.stopped) await reclaimDeletedSpace(this.sql, PURGE_ORDER);
      } catch (error) {
        this.onError(error);
      }
    });
    return this.running;
  }

  /** resolves when no purge is running */
  idle(): Promise<void> {
    return this.running;
  }

  /** stops after the statement in progress; the next start resumes */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async purge(appId: number): Promise<void> {
    for (const table of PURGE_ORDER) {
      for (;;) {
        if (this.stopped) return;
        const [{ n }] = (await this.sql.query<{ n: number }>(
          ...named(deleteChunk(table), { app: appId, rows: this.chunkRows }),
        )) as [{ n: number }];
        if (n < this.chunkRows) break;
      }
    }
  }
}

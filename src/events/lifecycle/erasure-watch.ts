// Lets every node's durable log forget what an erase removed: an erase (on any node, or the CLI on a server store)
// marks the store, and each node rewrites its own log's file without the records it already stored once it sees a
// mark it has not acted on (at its start, any mark at all: it may have been down when the erase ran).
import { named } from '../../db/named-sql.ts';
import type { SqlQueryable } from '../../db/sql.ts';

/** how often a node looks for an erase that ran elsewhere */
export const ERASURE_WATCH_EVERY_MS = 5_000;

const MARK_KEY = 'last_user_erasure';

/** records that an erase ran just now, for the nodes whose logs may still hold the user's released records */
export async function markErasure(sql: SqlQueryable): Promise<void> {
  await sql.query(
    ...named(
      `INSERT INTO settings (key, value) VALUES ('${MARK_KEY}', {{mark}}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      { mark: `${Date.now()}-${Math.random().toString(36).slice(2)}` },
    ),
  );
}

/** the compaction itself failed, not the look for an erase */
class CompactionFailed extends Error {
  constructor(readonly cause: unknown) {
    super(`compacting the durable log failed: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

export class ErasureWatch {
  /** the mark this node's log was last compacted for */
  private seen: string | null = null;
  private timer: NodeJS.Timeout | undefined;
  /** the looks in turn: the timer's and an erase's own on this node never compact the log twice for one mark */
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  /** the store did not answer the last look: said once, not at every look while it reopens */
  private lookFailed = false;

  constructor(
    private readonly sql: SqlQueryable,
    private readonly compactLog: () => Promise<void>,
    private readonly onError: (error: unknown, message: string) => void = () => {},
  ) {}

  /** looks now, then every `everyMs` until stopped */
  start(everyMs: number = ERASURE_WATCH_EVERY_MS): void {
    const run = () => {
      this.check()
        .then(() => (this.lookFailed = false))
        .catch((error: unknown) => {
          if (error instanceof CompactionFailed)
            this.onError(error.cause, 'compacting the durable log after an erase failed');
          else if (!this.lookFailed) {
            this.lookFailed = true;
            this.onError(
              error,
              'looking for an erase to compact the durable log after failed (said once until a look works)',
            );
          }
        })
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(run, everyMs).unref();
        });
    };
    run();
  }

  /** compacts the log when an erase ran since it last did (after the look in progress, if any) */
  check(): Promise<void> {
    const look = this.running.then(() => this.compactIfMarked());
    this.running = look.catch(() => undefined);
    return look;
  }

  private async compactIfMarked(): Promise<void> {
    const [row] = await this.sql.query<{ value: string }>(`SELECT value FROM settings WHERE key = '${MARK_KEY}'`);
    if (!row || row.value === this.seen) return;
    await this.compactLog().catch((error: unknown) => {
      throw new CompactionFailed(error);
    });
    this.seen = row.value;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}

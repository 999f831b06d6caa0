// Whether the store takes writes, kept as state for /healthz: the loader's commits and a background probe record
// their outcomes, so the health check never waits behind the store's queue or a long read.
import { setTimeout as sleep } from 'node:timers/promises';
import type { SqlRunner } from '../../db/sql.ts';

/** how often the probe asks the store, when nothing else said it answered */
const PROBE_INTERVAL_MS = 2_000;
/** a probe unanswered this long makes the store unavailable (a long read delays it, but not this long) */
const PROBE_STUCK_MS = 30_000;

export interface StoreCondition {
  /** ms since the epoch of the last commit or probe that succeeded; null before the first */
  lastSuccessAt: number | null;
  /** why the store does not take writes now; null while it does */
  failure: { at: number; reason: string } | null;
}

const reasonOf = (error: unknown): string =>
  String((error as Error | null)?.message ?? error)
    .split('\n')
    .at(-1)!
    .slice(0, 300);

export class StoreHealth {
  private lastSuccessAt: number | null = null;
  /** the last probe's failure, until a probe succeeds */
  private probeFailure: { at: number; reason: string } | null = null;
  private probeStartedAt: number | null = null;
  private probing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly sql: Pick<SqlRunner, 'query'>,
    /** the loader's last failure, until one of its commits succeeds (a probe's read says nothing about writes) */
    private readonly writeFailure: () => { at: number; message: string } | null = () => null,
  ) {}

  start(): void {
    this.probe();
    this.timer = setInterval(() => this.probe(), PROBE_INTERVAL_MS).unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** a commit of the loader succeeded */
  committed(): void {
    this.lastSuccessAt = Date.now();
  }

  /**
   * The condition after a probe answered now, or, when the store cannot answer within waitMs (a long read holds the
   * embedded store's thread), as last recorded: a fresh answer where it is cheap, never a wait behind the store.
   */
  async current(waitMs: number): Promise<StoreCondition> {
    this.probe();
    await Promise.race([this.probing, sleep(waitMs, undefined, { ref: false })]);
    return this.condition();
  }

  condition(): StoreCondition {
    const write = this.writeFailure();
    const failure = write ? { at: write.at, reason: write.message } : this.probeFailure;
    const stuckFor = this.probeStartedAt === null ? 0 : Date.now() - this.probeStartedAt;
    if (!failure && stuckFor > PROBE_STUCK_MS) {
      return {
        lastSuccessAt: this.lastSuccessAt,
        failure: {
          at: this.probeStartedAt!,
          reason: `the store has not answered for ${Math.round(stuckFor / 1000)} s`,
        },
      };
    }
    return { lastSuccessAt: this.lastSuccessAt, failure };
  }

  /** one probe at a time: one still waiting (behind a long read) is not stacked on */
  private probe(): void {
    if (this.probeStartedAt !== null) return;
    this.probeStartedAt = Date.now();
    this.probing = this.sql
      .query('SELECT 1')
      .then(
        () => {
          this.lastSuccessAt = Date.now();
          this.probeFailure = null;
        },
        (error: unknown) => {
          this.probeFailure = { at: Date.now(), reason: reasonOf(error) };
        },
      )
      .finally(() => {
        this.probeStartedAt = null;
      });
  }
}

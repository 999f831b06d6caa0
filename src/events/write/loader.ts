// The loader: reads this node's durable log from the store's offset, stores the records in batches that grow
// with the backlog (the offset written by the same statement, so a crash replays at most the batch in flight),
// then releases them from the log. While the store fails it retries with backoff; ingestion goes on meanwhile.
import { setImmediate as yieldToIo, setTimeout as sleep } from 'node:timers/promises';
import { blamesData } from '../../db/errors.ts';
import type { DurableLog, LogRecord, ReadLimits } from '../../log/durable-log.ts';
import { batchOf, decodeRequest, rowBytesOf } from './log-record.ts';
import type { EventBatch, EventPlane } from './event-plane.ts';

export interface LoaderOptions {
  /** this node's name in the store's log offsets */
  node: string;
  /**
   * most bytes of events in one commit, as the event insert's rows (PGlite's WebAssembly memory grows to its largest
   * statement); a record's sections (src/events/write/log-record.ts) are not counted, as a batch merges them smaller
   */
  maxBatchBytes: number;
  /** most records (requests) in one commit */
  maxBatchRecords?: number;
  /** whether the store keeps the insights: which sections of the records a batch merges (default true) */
  insights?: boolean;
  /**
   * A commit starts at least this long after the previous one began, unless a full batch waits or someone waits
   * to read what was appended: under load, fewer and larger commits (a commit's fixed cost, the store's WAL flush
   * and the log's release, is paid per commit, not per event). Default 0.
   */
  minCommitIntervalMs?: number;
  /**
   * While fewer than `bytes` of records wait, a commit starts only `waitMs` after the previous one began (unless
   * someone waits to read): a small app's trickle of events is stored a few times a second, since a commit's fixed
   * cost is most of what storing a handful of events costs. Once `bytes` wait, minCommitIntervalMs applies.
   */
  smallBatch?: { bytes: number; waitMs: number };
  /** a failure the loader goes on after (the store down, a record dropped) */
  onError?: (error: unknown, what: string) => void;
  /** after each commit */
  onCommit?: (commit: LoaderCommit) => void;
}

export interface LoaderCommit {
  /** requests in the commit */
  records: number;
  events: number;
  /** events new to the store */
  inserted: number;
  /** how long the store took */
  seconds: number;
  /** when each request was appended to the log (ms since the epoch): its wait from acknowledgement to the store */
  appendedAt: number[];
}

/** records read from the log, with the batch they make for the store */
interface Prepared {
  records: LogRecord[];
  batch: EventBatch;
}

const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 5_000;

export class LogLoader {
  private through: number;
  private running: Promise<void> | undefined;
  private stopping = false;
  /** wakes the loop when a record arrives or the loader stops */
  private wake: (() => void) | undefined;
  private readonly waiters: { through: number; resolve: () => void }[] = [];
  private lastFailure: { at: number; message: string } | null = null;
  private lastCommitAt = -Infinity;
  /** ends a wait between commits early */
  private hurry: (() => void) | undefined;
  /** the wait in progress is a small batch's (smallBatch.waitMs): it ends once enough records arrive */
  private waitingForSmallBatch = false;

  constructor(
    private readonly log: DurableLog,
    private readonly store: EventPlane,
    loadedThrough: number,
    private readonly options: LoaderOptions,
  ) {
    this.through = loadedThrough;
  }

  /** the last log record the store holds */
  get loadedThrough(): number {
    return this.through;
  }

  /** when the store last failed a commit, while the loader waits to retry; null once a commit succeeds */
  get failure(): { at: number; message: string } | null {
    return this.lastFailure;
  }

  start(): void {
    this.running ??= this.run();
  }

  /** a record was appended: load it now, or once its batch is due */
  notify(): void {
    this.wake?.();
    if (this.waitingForSmallBatch && !this.smallBatchWaits()) {
      this.waitingForSmallBatch = false;
      this.hurry?.();
    }
  }

  /** resolves once the store holds every record appended before the call (or after timeoutMs: false) */
  async caughtUp(timeoutMs = 5_000): Promise<boolean> {
    const target = this.log.stats().lastSeq;
    if (this.through >= target) return true;
    let resolve!: () => void;
    const reached = new Promise<void>((done) => (resolve = done));
    const waiter = { through: target, resolve };
    this.waiters.push(waiter);
    this.notify();
    this.hurry?.();
    const timer = sleep(timeoutMs, false, { ref: false });
    const result = await Promise.race([reached.then(() => true), timer]);
    if (!result) this.waiters.splice(this.waiters.indexOf(waiter), 1);
    return result;
  }

  /** loads what the log holds (for at most drainMs while the store fails), then stops */
  async stop(drainMs = 10_000): Promise<void> {
    if (!this.running) return;
    await this.caughtUp(drainMs);
    this.stopping = true;
    this.notify();
    this.hurry?.();
    await this.running;
  }

  private async run(): Promise<void> {
    let retryMs = 0;
    /** the next full batch, made while the store took the one before it */
    let next: Prepared | undefined;
    while (!this.stopping) {
      if (retryMs === 0 && !next) await this.pace();
      if (this.stopping) break;
      // after a failure one record probes the store: no batch of megabytes is built again and again while it is down
      const records =
        next?.records ?? this.log.read(this.through, retryMs > 0 ? { maxRecords: 1 } : this.batchLimits());
      if (records.length === 0) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
        continue;
      }
      const prepared = next;
      next = undefined;
      try {
        const batch = prepared?.batch ?? this.batchOf(records);
        this.lastCommitAt = performance.now();
        // the statement goes out at once; the next batch is made while the store takes this one (not while a record
        // probes a store that failed)
        const storing = this.commit(records, batch);
        const following = retryMs === 0 ? this.prepareFollowing(records) : undefined;
        await storing;
        next = await following;
        retryMs = 0;
        this.lastFailure = null;
      } catch (error) {
        retryMs = Math.min(LAST_RETRY_MS, Math.max(FIRST_RETRY_MS, retryMs * 2));
        this.lastFailure = {
          at: Date.now(),
          message: String((error as Error)?.message ?? error)
            .split('\n')
            .at(-1)!
            .slice(0, 300),
        };
        this.options.onError?.(error, `loading the log failed; retrying in ${retryMs} ms`);
        await Promise.race([sleep(retryMs), new Promise<void>((resolve) => (this.wake = resolve))]);
        this.wake = undefined;
      }
    }
  }

  /** how much of the log one batch takes */
  private batchLimits(): ReadLimits {
    return {
      maxBytes: this.options.maxBatchBytes,
      maxRecords: this.options.maxBatchRecords ?? 50_000,
      sizeOf: rowBytesOf,
    };
  }

  /** the store's batch of records (a run of the log, in order), with the offset of the last one */
  private batchOf(records: LogRecord[]): EventBatch {
    return batchOf(
      records.map((record) => decodeRequest(record.value)),
      { node: this.options.node, through: records.at(-1)!.seq },
      this.options.insights ?? true,
    );
  }

  /**
   * While the store takes `records`: the batch after them, when a full one waits beyond them (so the next commit
   * would not wait for more, as pace() has it), for the store to start on as soon as it is done; never fails
   */
  private async prepareFollowing(records: LogRecord[]): Promise<Prepared | undefined> {
    // the statement in flight goes out first
    await yieldToIo();
    const inFlight = records.reduce((sum, record) => sum + record.value.length, 0);
    if (this.stopping || !this.fullBatchWaits(inFlight)) return undefined;
    try {
      const following = this.log.read(records.at(-1)!.seq, this.batchLimits());
      return following.length > 0 ? { records: following, batch: this.batchOf(following) } : undefined;
    } catch {
      // the batch is then read and made again after the commit
      return undefined;
    }
  }

  /**
   * Whether a full batch waits in the log beyond `inFlightBytes` of records being stored. Judged by the log's bytes,
   * which count records whole: with their postings and summaries they weigh more than the rows a batch is filled by,
   * so this errs toward a batch not quite full, never toward waiting with a full one.
   */
  private fullBatchWaits(inFlightBytes = 0): boolean {
    return this.log.stats().bytes - inFlightBytes >= this.options.maxBatchBytes;
  }

  /** whether what waits in the log is a small batch (options.smallBatch), which waits longer for its commit */
  private smallBatchWaits(): boolean {
    const small = this.options.smallBatch;
    return small !== undefined && this.log.stats().bytes < small.bytes;
  }

  /**
   * waits out the least interval between commits (a small batch's longer one), unless a full batch or a reader
   * waits; a small batch grown past its size ends its longer wait (notify)
   */
  private async pace(): Promise<void> {
    for (;;) {
      if (this.waiters.length > 0 || this.stopping || this.fullBatchWaits()) return;
      const small = this.smallBatchWaits();
      const least = this.options.minCommitIntervalMs ?? 0;
      const interval = small ? Math.max(least, this.options.smallBatch!.waitMs) : least;
      const wait = this.lastCommitAt + interval - performance.now();
      if (wait <= 0) return;
      this.waitingForSmallBatch = small;
      await Promise.race([
        sleep(wait, undefined, { ref: false }),
        new Promise<void>((resolve) => (this.hurry = resolve)),
      ]);
      this.hurry = undefined;
      this.waitingForSmallBatch = false;
    }
  }

  /** stores records (a run of the log, in order) as `batch`, with the offset of the last one */
  private async commit(records: LogRecord[], batch: EventBatch): Promise<void> {
    const through = records.at(-1)!.seq;
    const started = performance.now();
    let inserted: number;
    try {
      inserted = await this.store.insertBatch(batch);
    } catch (error) {
      if (!blamesData(error)) throw error;
      // a record the statement refuses would stop the loader for good: find it by halves, store the rest
      if (records.length > 1) {
        const half = Math.ceil(records.length / 2);
        for (const part of [records.slice(0, half), records.slice(half)]) await this.commit(part, this.batchOf(part));
        return;
      }
      this.options.onError?.(
        error,
        `log record ${through} cannot be stored; its ${decodeRequest(records[0]!.value).events} events are dropped`,
      );
      inserted = await this.store.insertBatch(batchOf([], { node: this.options.node, through }));
    }
    this.options.onCommit?.({
      records: records.length,
      events: batch.usage.reduce((sum, [, , events]) => sum + events, 0),
      inserted,
      seconds: (performance.now() - started) / 1000,
      appendedAt: records.map((record) => record.appendedAt),
    });
    this.advance(through);
  }

  private advance(through: number): void {
    this.through = through;
    this.log
      .release(through)
      .catch((error: unknown) => this.options.onError?.(error, 'releasing loaded log records failed'));
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i]!.through <= through) this.waiters.splice(i, 1)[0]!.resolve();
    }
  }
}

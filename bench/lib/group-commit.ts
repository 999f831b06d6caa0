// Group commit for the ingest bench's store references: requests that arrive while a commit runs are written
// together in the next one, and each request is answered only after the commit holding its rows succeeded.
import { blamesData } from '../../src/db/errors.ts';

/** where a writer commits its batches */
export interface BatchStore<Row> {
  /** stores the rows in one commit; resolves with how many were new */
  insert(rows: Row[]): Promise<number>;
}

/**
 * Commits allowed to run at once on a store: a server takes two (the next batch is sent while one commits);
 * PGlite runs one statement at a time, and a second commit waiting beside it made the tail worse.
 */
export function commitConcurrency(kind: 'embedded' | 'server'): number {
  return kind === 'server' ? 2 : 1;
}

export class OverloadedError extends Error {
  constructor() {
    super('too many events waiting for the store');
  }
}

export class StoreUnavailableError extends Error {
  constructor(readonly cause: unknown) {
    super('the store failed a moment ago; not trying again yet');
  }
}

/** after the store failed for reasons that are not one request's data, refuse at once for this long */
const FAIL_FAST_MS = 1_000;

interface Submission<Row> {
  rows: Row[];
  /** the size of the request's events as JSON text (characters): what the commit's statement carries for them */
  bytes: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

export interface WriterOptions {
  /** most events written by one commit */
  maxBatchEvents?: number;
  /**
   * most event bytes written by one commit (one request may exceed it alone): PGlite's WebAssembly memory
   * grows to the largest statement it has run and never shrinks
   */
  maxBatchBytes?: number;
  /** events waiting beyond this are refused at once (memory stays bounded while the store is slow or down) */
  maxPendingEvents?: number;
  /** event bytes waiting beyond this are refused at once (a few large requests weigh as much as many events) */
  maxPendingBytes?: number;
  /** commits allowed to run at the same time (a server can take more than one) */
  concurrency?: number;
  onCommit?: (events: number, inserted: number, seconds: number) => void;
}

export class GroupCommitWriter<Row> {
  private queue: Submission<Row>[] = [];
  private pendingEvents = 0;
  private pendingBytes = 0;
  private running = 0;
  private idleWaiters: (() => void)[] = [];
  private failingUntil = 0;
  private lastFailure: unknown;
  private readonly maxBatchEvents: number;
  private readonly maxBatchBytes: number;
  private readonly maxPendingEvents: number;
  private readonly maxPendingBytes: number;
  private readonly concurrency: number;

  constructor(
    private readonly store: BatchStore<Row>,
    private readonly options: WriterOptions = {},
  ) {
    this.maxBatchEvents = options.maxBatchEvents ?? 5_000;
    this.maxBatchBytes = options.maxBatchBytes ?? 4 * 1024 * 1024;
    this.maxPendingEvents = options.maxPendingEvents ?? 200_000;
    this.maxPendingBytes = options.maxPendingBytes ?? 256 * 1024 * 1024;
    this.concurrency = options.concurrency ?? 1;
  }

  /**
   * Resolves once the rows are committed (rows stored before are skipped); rejects when they are not.
   * bytes: the size of the rows' events as JSON text (characters).
   */
  submit(rows: Row[], bytes = 0): Promise<void> {
    if (this.pendingEvents + rows.length > this.maxPendingEvents || this.pendingBytes + bytes > this.maxPendingBytes) {
      return Promise.reject(new OverloadedError());
    }
    if (Date.now() < this.failingUntil) return Promise.reject(new StoreUnavailableError(this.lastFailure));
    return new Promise((resolve, reject) => {
      this.queue.push({ rows, bytes, resolve, reject });
      this.pendingEvents += rows.length;
      this.pendingBytes += bytes;
      this.pump();
    });
  }

  /** Waits until everything submitted so far is committed or failed. */
  drained(): Promise<void> {
    if (this.queue.length === 0 && this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.running < this.concurrency && this.queue.length > 0) {
      this.running++;
      // let the requests of this event-loop turn join the batch before it is cut
      setImmediate(() => void this.commitNext());
    }
  }

  private takeBatch(): Submission<Row>[] {
    const batch: Submission<Row>[] = [];
    let events = 0;
    let bytes = 0;
    const fits = (next: Submission<Row>) =>
      events + next.rows.length <= this.maxBatchEvents && bytes + next.bytes <= this.maxBatchBytes;
    while (this.queue.length > 0 && (batch.length === 0 || fits(this.queue[0]!))) {
      const next = this.queue.shift()!;
      events += next.rows.length;
      bytes += next.bytes;
      batch.push(next);
    }
    return batch;
  }

  private async commitNext(): Promise<void> {
    const batch = this.takeBatch();
    try {
      if (batch.length > 0) await this.commit(batch);
    } finally {
      batch.forEach(this.release);
      this.running--;
      if (this.queue.length > 0) this.pump();
      else if (this.running === 0) this.idleWaiters.splice(0).forEach((wake) => wake());
    }
  }

  private async commit(batch: Submission<Row>[]): Promise<void> {
    const rows = batch.flatMap((submission) => submission.rows);
    const started = performance.now();
    try {
      const inserted = await this.store.insert(rows);
      this.options.onCommit?.(rows.length, inserted, (performance.now() - started) / 1000);
      for (const submission of batch) submission.resolve();
    } catch (error) {
      if (batch.length > 1 && blamesData(error)) {
        // one request's data must not fail its neighbours: retry each alone
        for (const submission of batch) await this.commit([submission]);
        return;
      }
      for (const submission of batch) submission.reject(error);
      if (!blamesData(error)) this.failFast(error);
    }
  }

  /** The store is down or stalled: everything waiting would wait just as long, so answer it now. */
  private failFast(error: unknown): void {
    this.failingUntil = Date.now() + FAIL_FAST_MS;
    this.lastFailure = error;
    for (const waiting of this.queue.splice(0)) {
      this.release(waiting);
      waiting.reject(new StoreUnavailableError(error));
    }
  }

  /** a submission committed or refused no longer counts against the waiting budgets */
  private readonly release = (submission: Submission<Row>): void => {
    this.pendingEvents -= submission.rows.length;
    this.pendingBytes -= submission.bytes;
  };
}

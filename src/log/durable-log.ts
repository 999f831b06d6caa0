// The durable local log: an append resolves once its record is on disk (fdatasync'd), records keep their order under
// growing sequence numbers, and a loader reads them in batches and releases them once the store holds them.
//
// Built on LMDB (npm lmdb): copy-on-write B-tree, two meta pages, so a crash or a torn write of the last transaction
// leaves the previous committed state. How it is opened, with each setting and why: log-database.ts.
import { DiskSpace } from './disk-space.ts';
import { Backlog } from './backlog.ts';
import { compactLogFile, removeCompactionLeftover } from './compact.ts';
import { commitFailure, LogClosedError, LogFullError, LogWriteError } from './errors.ts';
import { type AckLedger, readLedger } from './ack-ledger.ts';
import { type LogLoss, tellLoss } from './losses.ts';
import { openLogDatabase, type DurableLogLogger, type LogDatabase, type OpenedLogDatabase } from './log-database.ts';
import { logMapSize, type ProbeOutcome } from './probe.ts';
import { HEADER_BYTES, decodeRecord, encodeRecord, encodeWatermark } from './record-format.ts';
import { deleteReleased } from './release.ts';

export { LogClosedError, LogFullError, LogWriteError, type LogFullReason } from './errors.ts';
export type { DurableLogLogger } from './log-database.ts';
export type { LogLoss } from './losses.ts';
export type { ProbeOutcome } from './probe.ts';

export const DEFAULT_MAX_BYTES = 1024 ** 3;
export const DEFAULT_MIN_FREE_BYTES = 256 * 1024 ** 2;
const APPEND = { append: true };
const READ_DAMAGE = "a record's bytes are not what was written (checksum mismatch on read)";

export interface DurableLogOptions {
  /** appends are refused once the records waiting hold this many bytes (LOG_MAX_BYTES) */
  maxBytes?: number;
  /** appends are refused while the log's filesystem would keep less free space than this (0: no check) */
  minFreeBytes?: number;
  /** free space other writers on the log's disk still need, kept on top of minFreeBytes (see DiskSpace) */
  reserveBytes?: () => number;
  /**
   * The highest sequence number the store already holds (the loader's committed offset): records up to it are
   * released at open, and numbering continues above it even if the log file was lost or replaced.
   */
  loadedThrough?: number;
  /** damage found at open, records dropped, a file moved aside: said loudly here (default: stderr) */
  logger?: DurableLogLogger;
  /** the check of the file that probeLog (probe.ts) started for this open, with the same dir and maxBytes */
  probed?: Promise<ProbeOutcome>;
  /** what a record counts for when it is lost, e.g. the events in it (default 1) */
  weightOf?: (value: Buffer) => number;
}

export interface LogRecord {
  seq: number;
  /** the bytes given to append */
  value: Buffer;
  /** ms since the epoch */
  appendedAt: number;
}

export interface ReadLimits {
  /** at most this many records (default 1000) */
  maxRecords?: number;
  /** at most this many bytes of values, but always at least one record (default 16 MiB) */
  maxBytes?: number;
  /** what a record's value counts against maxBytes (default: its length) */
  sizeOf?: (value: Buffer) => number;
}

export interface LogStats {
  /** records durably appended and not released */
  records: number;
  /** their bytes, as given to append */
  bytes: number;
  /** when the oldest of them was appended (ms since the epoch), or null when none waits */
  oldestAppendedAt: number | null;
  /** the highest sequence number durably appended (or the numbering floor, before the first append) */
  lastSeq: number;
  /** every record up to this sequence number is released */
  releasedThrough: number;
}

const stderrLogger: DurableLogLogger = {
  warn: (details, message) => console.error(`[durable log] ${message}`, details),
  error: (details, message) => console.error(`[durable log] ${message}`, details),
};

export class DurableLog {
  private readonly backlog: Backlog;
  private readonly space: DiskSpace;
  private readonly maxBytes: number;
  private readonly logger: DurableLogLogger;
  /** the last sequence number handed out (its append may still be in flight) */
  private lastAssigned: number;
  private lastDurable: number;
  private releasedThrough: number;
  /** the numbering floor the watermark carries (a log started after damage numbers from the clock) */
  private readonly numberFloor: number;
  private oldestAppendedAt: number | null;
  private pendingBytes = 0;
  /** appends and releases not settled yet; close waits for them */
  private inFlight = 0;
  private drained: (() => void) | null = null;
  private releasing: Promise<void> = Promise.resolve();
  /** released records whose deletion failed; the next release tries them again */
  private undeleted: number[] = [];
  private readonly reportedDamage = new Set<number>();
  private closed = false;
  /** a compaction running: appends and releases wait for it, reads find nothing */
  private compacting: Promise<void> | null = null;
  private readonly ledger: AckLedger;
  private readonly weightOf: (value: Buffer) => number;
  /** acknowledged records the open found missing from the file (damage, or an older copy), or null */
  readonly openLoss: LogLoss | null;

  private constructor(
    private db: LogDatabase,
    opened: OpenedLogDatabase,
    private readonly dir: string,
    private readonly mapSize: number,
    options: DurableLogOptions,
  ) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.logger = options.logger ?? stderrLogger;
    this.space = new DiskSpace(dir, options.minFreeBytes ?? DEFAULT_MIN_FREE_BYTES, undefined, options.reserveBytes);
    this.releasedThrough = opened.releasedThrough;
    this.numberFloor = opened.numberedThrough;
    this.lastAssigned = opened.numberedThrough;
    this.lastDurable = opened.numberedThrough;
    this.backlog = new Backlog();
    for (const record of opened.records) this.backlog.add(record.seq, record.size);
    this.oldestAppendedAt = opened.records[0]?.appendedAt ?? null;
    this.ledger = opened.ledger;
    this.openLoss = opened.loss;
    this.weightOf = options.weightOf ?? (() => 1);
  }

  /** opens (or creates) the log in dir; never refuses because of damage: see log-database.ts */
  static async open(dir: string, options: DurableLogOptions = {}): Promise<DurableLog> {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    if (!(maxBytes > 0)) throw new RangeError('maxBytes must be positive');
    const mapSize = logMapSize(maxBytes);
    removeCompactionLeftover(dir);
    const opened = await openLogDatabase(dir, {
      mapSize,
      loadedThrough: options.loadedThrough ?? 0,
      logger: options.logger ?? stderrLogger,
      probed: options.probed,
      weightOf: options.weightOf,
    });
    const log = new DurableLog(opened.db, opened, dir, mapSize, options);
    await log.space.refresh();
    return log;
  }

  /** why an append of this many bytes would be refused up front now (its bound, the free-space headroom), or null */
  refusal(size = 0): LogFullError | null {
    if (this.backlog.bytes + this.pendingBytes + size > this.maxBytes) {
      return new LogFullError(
        'max-bytes',
        `the log holds ${this.backlog.bytes + this.pendingBytes} bytes waiting; its bound is ${this.maxBytes}`,
      );
    }
    if (!this.space.allows(size + HEADER_BYTES)) {
      return new LogFullError('disk-headroom', `less than the required free space is left on the log's disk`);
    }
    return null;
  }

  /**
   * Appends one record; resolves with its sequence number once it is durably on disk. Rejects at once, writing
   * nothing, with LogFullError when the log holds maxBytes or the disk would keep less than minFreeBytes; rejects
   * with LogFullError('disk-full') or LogWriteError when its transaction fails (nothing of it is then in the log).
   */
  append(value: Uint8Array): Promise<number> {
    if (this.closed) return Promise.reject(new LogClosedError());
    if (this.compacting) return this.afterCompaction(() => this.append(value));
    const size = value.byteLength;
    const refused = this.refusal(size);
    if (refused) return Promise.reject(refused);
    const seq = ++this.lastAssigned;
    const appendedAt = Date.now();
    this.pendingBytes += size;
    this.space.note(size + HEADER_BYTES);
    this.inFlight += 1;
    return this.putAppend(seq, encodeRecord(value, appendedAt)).then(
      (stored) => {
        this.pendingBytes -= size;
        try {
          // MDB_APPEND refuses a key that is not above the last one; sequence numbers only grow, so this is a bug
          if (!stored)
            throw new LogWriteError(`log record ${seq} was refused: its number is not above the last record's`);
          if (this.backlog.records === 0) this.oldestAppendedAt = appendedAt;
          this.backlog.add(seq, size);
          this.lastDurable = seq;
          // before the caller hears of it: an acknowledged record is always in the ledger
          this.ledger.record(seq, this.weightOf(Buffer.from(value.buffer, value.byteOffset, value.byteLength)));
          return seq;
        } finally {
          this.settled();
        }
      },
      async (error: unknown) => {
        this.pendingBytes -= size;
        const failure = await commitFailure(error, seq);
        this.settled();
        throw failure;
      },
    );
  }

  /**
   * The records after afterSeq, in order: only those whose append has resolved (a committed record can be visible a
   * moment before its promise settles), and never a released one.
   */
  read(afterSeq: number, limits: ReadLimits = {}): LogRecord[] {
    if (this.closed) throw new LogClosedError();
    if (this.compacting) return [];
    const maxRecords = limits.maxRecords ?? 1000;
    const maxBytes = limits.maxBytes ?? 16 * 1024 ** 2;
    const sizeOf = limits.sizeOf ?? ((value: Buffer) => value.length);
    const records: LogRecord[] = [];
    let bytes = 0;
    const range = { start: Math.max(afterSeq, this.releasedThrough) + 1, end: this.lastDurable + 1 };
    for (const { key, value } of this.db.getRange(range)) {
      const decoded = decodeRecord(value);
      if (decoded === null) {
        this.reportDamage(key);
        continue;
      }
      const size = sizeOf(decoded.payload);
      if (records.length > 0 && bytes + size > maxBytes) break;
      records.push({ seq: key, value: decoded.payload, appendedAt: decoded.appendedAt });
      bytes += size;
      if (records.length >= maxRecords) break;
    }
    return records;
  }

  /**
   * Releases every record up to and including throughSeq (the store holds them): they leave the stats and reads at
   * once, and their pages are freed for reuse. Resolves once that is durable; a release that fails (a full disk)
   * rejects, and its deletions are tried again with the next release and at the next open.
   */
  release(throughSeq: number): Promise<void> {
    if (this.closed) return Promise.reject(new LogClosedError());
    if (this.compacting) return this.afterCompaction(() => this.release(throughSeq));
    if (!Number.isSafeInteger(throughSeq))
      return Promise.reject(new RangeError(`not a sequence number: ${throughSeq}`));
    if (throughSeq > this.lastDurable) {
      return Promise.reject(
        new RangeError(`cannot release through ${throughSeq}: the last durable record is ${this.lastDurable}`),
      );
    }
    if (throughSeq <= this.releasedThrough) return this.releasing;
    const deletions = [...this.undeleted, ...this.backlog.releaseThrough(throughSeq)];
    this.undeleted = [];
    this.releasedThrough = throughSeq;
    // the store holds them: no loss can take them any more
    this.ledger.released(throughSeq, this.backlog.records === 0);
    this.oldestAppendedAt = this.readOldestAppendedAt();
    const watermark = encodeWatermark({
      releasedThrough: throughSeq,
      numberedThrough: Math.max(this.numberFloor, throughSeq),
    });
    this.inFlight += 1;
    const step = this.releasing
      .catch(() => undefined)
      .then(() => deleteReleased(this.db, watermark, deletions, (seqs) => this.undeleted.push(...seqs)))
      .finally(() => this.settled());
    this.releasing = step;
    return step;
  }

  stats(): LogStats {
    return {
      records: this.backlog.records,
      bytes: this.backlog.bytes,
      oldestAppendedAt: this.oldestAppendedAt,
      lastSeq: this.lastDurable,
      releasedThrough: this.releasedThrough,
    };
  }

  /**
   * Rewrites the file with the records waiting alone, so no released record stays readable in it (an erased user's
   * included). Appends and releases wait meanwhile, and the loader reads nothing; it costs a copy of the records
   * waiting, usually few. A compaction that fails leaves the log as it was.
   */
  compact(): Promise<void> {
    if (this.closed) return Promise.reject(new LogClosedError());
    if (this.compacting) return this.compacting;
    const run = async () => {
      await this.idle();
      this.db = await compactLogFile(this.db, this.dir, this.mapSize);
    };
    this.compacting = run().finally(() => {
      this.compacting = null;
    });
    return this.compacting;
  }

  /** waits for appends and releases in flight, then closes the file; later calls reject with LogClosedError */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.compacting?.catch(() => undefined);
    await this.idle();
    await this.db.close();
    this.ledger.close();
  }

  /** runs step once the compaction running is over, whether it worked or not */
  private afterCompaction<T>(step: () => Promise<T>): Promise<T> {
    return (this.compacting ?? Promise.resolve()).catch(() => undefined).then(step);
  }

  private async idle(): Promise<void> {
    if (this.inFlight > 0) await new Promise<void>((resolve) => (this.drained = resolve));
  }

  /** lmdb's put takes put options at run time (MDB_APPEND here); its type declarations only list a version */
  private putAppend(seq: number, stored: Buffer): Promise<boolean> {
    const put = this.db.put as unknown as (
      key: number,
      value: Buffer,
      options: { append: boolean },
    ) => Promise<boolean>;
    return put.call(this.db, seq, stored, APPEND);
  }

  private settled(): void {
    this.inFlight -= 1;
    if (this.inFlight === 0 && this.drained) {
      this.drained();
      this.drained = null;
    }
  }

  /** the append time of the oldest record waiting: one read of its header */
  private readOldestAppendedAt(): number | null {
    const first = this.backlog.firstSeq();
    if (first === null) return null;
    const stored = this.db.getBinary(first);
    return (stored && decodeRecord(stored)?.appendedAt) ?? Date.now();
  }

  /** a record found damaged while the log runs: said, and recorded as a loss until an operator acknowledges it */
  private reportDamage(seq: number): void {
    if (this.reportedDamage.has(seq)) return;
    this.reportedDamage.add(seq);
    const events = readLedger(this.dir)?.get(seq) ?? 1;
    tellLoss(
      this.dir,
      { at: new Date().toISOString(), records: 1, events, firstSeq: seq, lastSeq: seq, cause: READ_DAMAGE },
      this.logger,
    );
  }
}

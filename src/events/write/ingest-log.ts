// What a 201 waits for: the request's rows appended to this node's durable log in DATA_DIR/log. The loader
// then stores them in batches; the store being slow or down delays loading, not ingestion, up to the log's bound.
import crypto from 'node:crypto';
import path from 'node:path';
import { readOrCreateFile } from '../../platform/read-or-create.ts';
import { embeddedStoreReserve } from '../../db/embedded/reserve.ts';
import {
  DurableLog,
  type DurableLogLogger,
  LogFullError,
  type LogLoss,
  type LogStats,
  type ProbeOutcome,
} from '../../log/durable-log.ts';
import { logDirIn } from './log-dir.ts';
import { LogLoader, type LoaderCommit, type LoaderOptions } from './loader.ts';
import { decodeRequestHeader, encodeRequest } from './log-record.ts';
import type { EventPlane } from './event-plane.ts';
import type { EventRow } from './event-columns.ts';

/** how long a refusal by the full disk counts as the log's state when no append has succeeded since */
const DISK_REFUSAL_TRUSTED_MS = 10_000;

/** the request whose refusal refusal() asks about: a few dozen events, so "takes them" holds for ordinary requests */
const TYPICAL_REQUEST_BYTES = 16 * 1024;

export interface IngestLogOptions {
  maxBytes: number;
  minFreeBytes: number;
  /** most bytes of records the loader stores in one commit */
  maxBatchBytes: number;
  /** least time between the starts of two commits, unless a full batch or a reader waits */
  minCommitIntervalMs?: number;
  /** while fewer bytes than this wait, the longer least time between commits (a small app's trickle) */
  smallBatch?: LoaderOptions['smallBatch'];
  /** the store keeps the insights (default): its records hold what the insights' rollups gather */
  insights?: boolean;
  /** the embedded store's data directory: the log keeps free what the store may still need on the same disk */
  embeddedStoreDir?: string;
  /** the check of the log's file that probeIngestLog started, with the same data directory and maxBytes */
  probed?: Promise<ProbeOutcome>;
  /** failures of the loader's background work (an error, and what failed) */
  onError?: (error: unknown, what: string) => void;
  /** what the log says of its file at open (damage, losses), with their fields and level (default: stderr) */
  logger?: DurableLogLogger;
  onCommit?: (commit: LoaderCommit) => void;
}

/** this node's name in the store's log offsets: made once per data directory, so a restart keeps its log's offset */
function nodeName(logDir: string): string {
  return readOrCreateFile(path.join(logDir, 'node'), () => crypto.randomUUID());
}

/** what waits in the log for the store */
export interface IngestBacklog extends LogStats {
  events: number;
}

/** the events of the records the log holds at open (their header lines), read in chunks */
function eventsWaiting(log: DurableLog, loadedThrough: number): number {
  let events = 0;
  for (let after = loadedThrough; ; ) {
    const records = log.read(after, { maxRecords: 10_000, maxBytes: 64 * 1024 ** 2 });
    if (records.length === 0) return events;
    for (const record of records) events += decodeRequestHeader(record.value).events;
    after = records.at(-1)!.seq;
  }
}

export class IngestLog {
  private constructor(
    private readonly log: DurableLog,
    readonly loader: LogLoader,
    readonly node: string,
    private readonly waiting: { events: number },
    private readonly insights: boolean,
  ) {}

  static async open(dataDir: string, store: EventPlane, options: IngestLogOptions): Promise<IngestLog> {
    const logDir = logDirIn(dataDir);
    const node = nodeName(logDir);
    const loadedThrough = await store.loadedThrough(node);
    const storeDir = options.embeddedStoreDir;
    let opened: DurableLog | undefined;
    const log = await DurableLog.open(logDir, {
      maxBytes: options.maxBytes,
      minFreeBytes: options.minFreeBytes,
      reserveBytes: storeDir ? () => embeddedStoreReserve(storeDir, logDir, opened?.stats().bytes ?? 0) : undefined,
      loadedThrough,
      probed: options.probed,
      logger: options.logger,
      // a lost record is counted by the events in it
      weightOf: (value) => decodeRequestHeader(value).events,
    });
    opened = log;
    const waiting = { events: eventsWaiting(log, loadedThrough) };
    const loader = new LogLoader(log, store, loadedThrough, {
      node,
      maxBatchBytes: options.maxBatchBytes,
      insights: options.insights,
      minCommitIntervalMs: options.minCommitIntervalMs,
      smallBatch: options.smallBatch,
      onError: options.onError,
      onCommit: (commit) => {
        waiting.events -= commit.events;
        options.onCommit?.(commit);
      },
    });
    loader.start();
    return new IngestLog(log, loader, node, waiting, options.insights ?? true);
  }

  /** acknowledged events this open found missing from the log's file, or null */
  get openLoss(): LogLoss | null {
    return this.log.openLoss;
  }

  /** the last append the disk refused (ENOSPC under the guard's estimate), until an append succeeds */
  private diskRefusal: { error: LogFullError; at: number } | null = null;

  /** resolves once the rows of one request (one app, one receive time) are durably in the log */
  async append(rows: EventRow[], bytes: number): Promise<void> {
    try {
      await this.log.append(encodeRequest(rows, bytes, this.insights));
    } catch (error) {
      if (error instanceof LogFullError && error.reason === 'disk-full') this.diskRefusal = { error, at: Date.now() };
      throw error;
    }
    this.diskRefusal = null;
    this.waiting.events += rows.length;
    this.loader.notify();
  }

  /** rewrites the log's file so records already stored leave no bytes in it (after an erase) */
  async compact(): Promise<void> {
    try {
      await this.log.compact();
    } finally {
      // the loader found nothing to read meanwhile and waits for an append: records waiting wake it instead
      this.loader.notify();
    }
  }

  /** why the log would refuse a request now (its bound, the disk's headroom, a full disk), or null when it takes them */
  refusal(): LogFullError | null {
    // a refusal by the disk itself is believed for a while only: with no append since, space may have returned
    const recent = this.diskRefusal && Date.now() - this.diskRefusal.at < DISK_REFUSAL_TRUSTED_MS;
    return this.log.refusal(TYPICAL_REQUEST_BYTES) ?? (recent ? this.diskRefusal!.error : null);
  }

  stats(): IngestBacklog {
    const stats = this.log.stats();
    // a request loaded before its append's continuation ran is subtracted first; none waiting means none
    return { ...stats, events: stats.records === 0 ? 0 : Math.max(0, this.waiting.events) };
  }

  /** stores what the log holds (while the store answers, for at most drainMs), then closes the log */
  async close(drainMs?: number): Promise<void> {
    await this.loader.stop(drainMs);
    await this.log.close();
  }
}

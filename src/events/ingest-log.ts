// What a 201 waits for: the request's rows appended to this node's durable log in DATA_DIR/log. The loader
// then stores them in batches; the store being slow or down delays loading, not ingestion, up to the log's bound.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DurableLog, type LogStats } from '../log/durable-log.ts';
import { LogLoader, type LoaderCommit } from './loader.ts';
import { encodeRequest } from './log-record.ts';
import type { EventRow, EventStore } from './store.ts';

export interface IngestLogOptions {
  maxBytes: number;
  minFreeBytes: number;
  /** most bytes of records the loader stores in one commit */
  maxBatchBytes: number;
  /** least time between the starts of two commits, unless a full batch or a reader waits */
  minCommitIntervalMs?: number;
  onError?: (error: unknown, what: string) => void;
  onCommit?: (commit: LoaderCommit) => void;
}

/** this node's name in the store's log offsets: made once per data directory, so a restart keeps its log's offset */
function nodeName(logDir: string): string {
  const file = path.join(logDir, 'node');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  fs.mkdirSync(logDir, { recursive: true });
  const name = crypto.randomUUID();
  fs.writeFileSync(file, name, { flag: 'wx' });
  return name;
}

export class IngestLog {
  private constructor(
    private readonly log: DurableLog,
    readonly loader: LogLoader,
    readonly node: string,
  ) {}

  static async open(dataDir: string, store: EventStore, options: IngestLogOptions): Promise<IngestLog> {
    const logDir = path.join(dataDir, 'log');
    const node = nodeName(logDir);
    const loadedThrough = await store.loadedThrough(node);
    const log = await DurableLog.open(logDir, {
      maxBytes: options.maxBytes,
      minFreeBytes: options.minFreeBytes,
      loadedThrough,
      logger: {
        warn: (details, message) => options.onError?.(details, message),
        error: (details, message) => options.onError?.(details, message),
      },
    });
    const loader = new LogLoader(log, store, loadedThrough, {
      node,
      maxBatchBytes: options.maxBatchBytes,
      minCommitIntervalMs: options.minCommitIntervalMs,
      onError: options.onError,
      onCommit: options.onCommit,
    });
    loader.start();
    return new IngestLog(log, loader, node);
  }

  /** resolves once the rows of one request (one app, one receive time) are durably in the log */
  async append(rows: EventRow[], bytes: number): Promise<void> {
    await this.log.append(encodeRequest(rows, bytes));
    this.loader.notify();
  }

  stats(): LogStats {
    return this.log.stats();
  }

  /** stores what the log holds (while the store answers, for at most drainMs), then closes the log */
  async close(drainMs?: number): Promise<void> {
    await this.loader.stop(drainMs);
    await this.log.close();
  }
}

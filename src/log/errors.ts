// Errors the durable log rejects with, and which one a failed LMDB transaction is; the service answers "Failed to
// record" for each of them.

/** why an append was refused: the log's own bound, the free-disk headroom, or the disk really being full */
export type LogFullReason = 'max-bytes' | 'disk-headroom' | 'disk-full';

/** the record was not written (refused up front, or its transaction failed for lack of space); retrying later may work */
export class LogFullError extends Error {
  readonly code = 'LOG_FULL';
  constructor(
    readonly reason: LogFullReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LogFullError';
  }
}

/** the record's transaction failed for another reason (an I/O error); nothing of it is in the log */
export class LogWriteError extends Error {
  readonly code = 'LOG_WRITE_FAILED';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LogWriteError';
  }
}

/** the log is closed or closing */
export class LogClosedError extends Error {
  readonly code = 'LOG_CLOSED';
  constructor() {
    super('the log is closed');
    this.name = 'LogClosedError';
  }
}

const ENOSPC = 28;
const EDQUOT = 122;
const MDB_MAP_FULL = -30792;

/**
 * What a write of a failed transaction is rejected with here: LogFullError('disk-full') for a full disk (or quota),
 * LogWriteError otherwise. lmdb rejects the write with a generic error; the errno is on its commitError promise.
 */
export async function commitFailure(error: unknown, seq: number): Promise<Error> {
  let cause = error;
  const commitError = (error as { commitError?: Promise<unknown> } | null)?.commitError;
  if (commitError && typeof commitError.then === 'function') {
    cause = await Promise.race([
      commitError.then(
        () => error,
        (reason: unknown) => reason,
      ),
      new Promise((resolve) => setTimeout(resolve, 1_000).unref()).then(() => error),
    ]);
  }
  const code = (cause as { code?: unknown } | null)?.code;
  const message = (cause as Error | null)?.message ?? String(cause);
  if (
    code === ENOSPC ||
    code === EDQUOT ||
    code === 'ENOSPC' ||
    code === MDB_MAP_FULL ||
    /No space left/i.test(message)
  ) {
    return new LogFullError('disk-full', `the disk is full: log record ${seq} was not written`, { cause });
  }
  return new LogWriteError(`log record ${seq} was not written: ${message}`, { cause });
}

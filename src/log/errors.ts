// Errors the durable log rejects with; the service answers "Failed to record" for each of them.

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

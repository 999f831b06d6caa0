// The losses a node's durable log was found with (src/log/log-database.ts counts them at open), kept beside the log
// until an operator acknowledges them: /healthz, the metrics and the CLI read them here.
import fs from 'node:fs';
import path from 'node:path';

const LOSSES_FILE = 'losses.json';

/** acknowledged records found missing from the log's file (at open, or damaged on read), and why */
export interface LogLoss {
  /** when the open found it (ISO 8601) */
  at: string;
  records: number;
  /** their weight: the events in them */
  events: number;
  firstSeq: number;
  lastSeq: number;
  cause: string;
  /** where the damaged file went, when it was moved aside */
  movedTo?: string;
}

export interface RecordedLoss extends LogLoss {
  /** when an operator acknowledged it (ISO 8601), or absent */
  acknowledgedAt?: string;
}

/** every loss recorded in the log's directory, oldest first */
export function readLosses(logDir: string): RecordedLoss[] {
  try {
    const losses = JSON.parse(fs.readFileSync(path.join(logDir, LOSSES_FILE), 'utf8')) as unknown;
    return Array.isArray(losses) ? (losses as RecordedLoss[]) : [];
  } catch {
    return [];
  }
}

function writeLosses(logDir: string, losses: RecordedLoss[]): void {
  const file = path.join(logDir, LOSSES_FILE);
  fs.writeFileSync(`${file}.new`, `${JSON.stringify(losses, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(`${file}.new`, file);
}

export function recordLoss(logDir: string, loss: LogLoss): void {
  writeLosses(logDir, [...readLosses(logDir), loss]);
}

/** a loss said in one error line with its fields, and recorded until an operator acknowledges it */
export function tellLoss(
  logDir: string,
  loss: LogLoss,
  logger: { error(details: object, message: string): void },
): void {
  const { records, events, firstSeq, lastSeq, cause, movedTo } = loss;
  logger.error(
    { lostRecords: records, lostEvents: events, firstSeq, lastSeq, cause, ...(movedTo ? { movedTo } : {}) },
    `durable log: ${events} acknowledged events in ${records} requests are lost (${cause}); ` +
      'they are counted in /healthz and the metrics until an operator acknowledges them (cli log acknowledge)',
  );
  try {
    recordLoss(logDir, loss);
  } catch (error) {
    logger.error({ err: error }, 'durable log: the loss could not be recorded for /healthz (a full disk?)');
  }
}

/** the losses no operator acknowledged yet */
export const unacknowledgedLosses = (logDir: string): RecordedLoss[] =>
  readLosses(logDir).filter((loss) => loss.acknowledgedAt === undefined);

/** marks every loss acknowledged (they stay in the file as a record); returns those it marked */
export function acknowledgeLosses(logDir: string, now = new Date()): RecordedLoss[] {
  const losses = readLosses(logDir);
  const open = losses.filter((loss) => loss.acknowledgedAt === undefined);
  if (open.length > 0)
    writeLosses(
      logDir,
      losses.map((loss) => (loss.acknowledgedAt === undefined ? { ...loss, acknowledgedAt: now.toISOString() } : loss)),
    );
  return open;
}

/** the unacknowledged losses summed: what /healthz and the metrics show */
export function lossTotals(losses: readonly RecordedLoss[]): { events: number; records: number; since: string | null } {
  return {
    events: losses.reduce((sum, loss) => sum + loss.events, 0),
    records: losses.reduce((sum, loss) => sum + loss.records, 0),
    since: losses[0]?.at ?? null,
  };
}

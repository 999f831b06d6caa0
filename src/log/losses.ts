// The losses a node's durable log was found with (src/log/log-database.ts counts them at open), kept beside the log
// until an operator acknowledges them: /healthz, the metrics and the CLI read them here.
import fs from 'node:fs';
import path from 'node:path';
import type { LogLoss } from './log-database.ts';

const LOSSES_FILE = 'losses.json';

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

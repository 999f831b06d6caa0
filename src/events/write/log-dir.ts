// Where a node's durable log lives in DATA_DIR, and the check of its file a start runs while the store opens. Apart
// from ingest-log.ts, whose code (lmdb among it) loads later in a start.
import path from 'node:path';
import { probeLog, type ProbeOutcome } from '../../log/probe.ts';

export const logDirIn = (dataDir: string): string => path.join(dataDir, 'log');

/** probeLog for the log in dataDir, for IngestLog.open's `probed` (see probeLog for when it may run) */
export function probeIngestLog(dataDir: string, maxBytes: number): Promise<ProbeOutcome> {
  return probeLog(logDirIn(dataDir), maxBytes);
}

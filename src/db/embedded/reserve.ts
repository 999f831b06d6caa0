// The free disk the embedded store may still need on the durable log's disk, so the log refuses events before the
// store meets ENOSPC: WAL segments up to max_wal_size, and the rows of what waits in the log.
import fs from 'node:fs';
import path from 'node:path';
import { MAX_WAL_BYTES, WAL_SEGMENT_BYTES } from './layout.ts';

/**
 * Bytes the store's files grow by per byte of a log record it loads: a record's rows with their indexes, rollups
 * and the WAL that carries them take a few times its encoded size.
 */
export const STORE_BYTES_PER_LOG_BYTE = 3;

function bytesIn(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile()) total += fs.statSync(path.join(dir, entry.name)).size;
  }
  return total;
}

/**
 * What the store in pgdata may still take of the disk the log in logDir is on: the WAL's growth up to its bound
 * (never less than two segments, the next one allocated whole and one beyond max_wal_size, a soft bound) and the
 * rows of backlogBytes of records. Nothing when the two are on different filesystems.
 */
export function embeddedStoreReserve(pgdata: string, logDir: string, backlogBytes: number): number {
  if (fs.statSync(pgdata).dev !== fs.statSync(logDir).dev) return 0;
  const wal = bytesIn(path.join(pgdata, 'pg_wal'));
  const walGrowth = Math.max(2 * WAL_SEGMENT_BYTES, MAX_WAL_BYTES + WAL_SEGMENT_BYTES - wal);
  return walGrowth + backlogBytes * STORE_BYTES_PER_LOG_BYTE;
}

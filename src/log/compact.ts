// Rewrites the log's file with only the records it holds: LMDB frees a released record's pages without clearing them,
// so the record's bytes stay readable in the file until a later write happens to reuse its pages.
import fs from 'node:fs';
import path from 'node:path';
import { DATA_FILE, openLogDatabaseUnchecked, type LogDatabase } from './log-database.ts';

/** where the compacted copy is written before it replaces the file */
const COMPACTING_DIR = 'compacting';

/** a copy a compaction left behind when the process stopped during it: it may hold released records */
export function removeCompactionLeftover(dir: string): void {
  fs.rmSync(path.join(dir, COMPACTING_DIR), { recursive: true, force: true });
}

function syncPath(target: string): void {
  const fd = fs.openSync(target, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes a compacted copy of the committed state (LMDB's MDB_CP_COMPACT: live pages only, free pages left out), syncs
 * it, closes db and renames the copy over the file, then opens it again. The rename is atomic: a crash at any point
 * leaves the old file or the copy, each holding every record not released. No write may be in flight meanwhile.
 */
export async function compactLogFile(db: LogDatabase, dir: string, mapSize: number): Promise<LogDatabase> {
  const copyDir = path.join(dir, COMPACTING_DIR);
  removeCompactionLeftover(dir);
  fs.mkdirSync(copyDir);
  try {
    await db.backup(copyDir, true);
    syncPath(path.join(copyDir, DATA_FILE));
  } catch (error) {
    removeCompactionLeftover(dir);
    throw error;
  }
  await db.close();
  try {
    fs.renameSync(path.join(copyDir, DATA_FILE), path.join(dir, DATA_FILE));
    syncPath(dir);
  } finally {
    removeCompactionLeftover(dir);
  }
  return openLogDatabaseUnchecked(dir, mapSize, false);
}

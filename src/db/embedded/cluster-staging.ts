// Where a new cluster is made before it is renamed into place, and the mark a copy of the template carries until it
// first opened: whatever a first start cut short leaves behind is recognised by the next start and never used.
import fs from 'node:fs';
import path from 'node:path';
import { syncPath } from './durable-pglite.ts';

/**
 * Written into a copy of the template before it is renamed into place and deleted once the copy opened: a cluster
 * holding it never opened (its first start was cut short, or it did not open), so nothing was ever stored in it. A
 * cluster without it has opened, or was made by initdb, which opens it itself (or by a version without the mark).
 */
export const UNOPENED_MARK = 'template-copy.unopened';

export const hasCluster = (pgdata: string) => fs.existsSync(path.join(pgdata, 'PG_VERSION'));

export const isUnopened = (pgdata: string) => fs.existsSync(path.join(pgdata, UNOPENED_MARK));

/** every directory beside pgdata named so is a creation's or a discard's, and is removed by the next start */
const stagingPath = (pgdata: string) => `${pgdata}.new-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

export function markUnopened(dir: string): void {
  const mark = path.join(dir, UNOPENED_MARK);
  fs.writeFileSync(mark, 'a copy of the cluster template that has not opened yet\n', { mode: 0o600 });
  syncPath(mark);
  syncPath(dir);
}

/** the copy in pgdata opened: it is the store from now on (the deletion synced, or a power loss could undo it) */
export function markOpened(pgdata: string): void {
  if (!isUnopened(pgdata)) return;
  fs.rmSync(path.join(pgdata, UNOPENED_MARK));
  syncPath(pgdata);
}

/**
 * Removes the staging directories creations cut short left beside pgdata (a killed first start's copy, a discarded
 * cluster not deleted yet). Only for the owner of DATA_DIR (the owner lock): no other creator is at work there.
 */
export function removeStaging(pgdata: string): void {
  const dir = path.dirname(pgdata);
  const prefix = `${path.basename(pgdata)}.new-`;
  if (!fs.existsSync(dir)) return;
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith(prefix)) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
  }
}

/** takes pgdata away in one rename, then deletes it: cut short, what is left is a staging directory */
export function discardCluster(pgdata: string): void {
  const aside = stagingPath(pgdata);
  fs.renameSync(pgdata, aside);
  syncPath(path.dirname(pgdata));
  fs.rmSync(aside, { recursive: true, force: true });
}

/**
 * Makes the cluster in a directory next to pgdata, synced, then renames it into place (pgdata is missing or empty): a
 * creation cut short leaves no half-made cluster behind, and of two creators the first rename wins.
 */
export async function stageCluster(pgdata: string, make: (staging: string) => Promise<void> | void): Promise<void> {
  const staging = stagingPath(pgdata);
  fs.mkdirSync(staging, { mode: 0o700 });
  try {
    await make(staging);
    try {
      fs.renameSync(staging, pgdata);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !hasCluster(pgdata)) throw error;
    }
    syncPath(path.dirname(pgdata));
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

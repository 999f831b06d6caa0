// Opens PGlite so that a commit is on disk before it returns: PostgreSQL's fsync switched on and carried to the real file.
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';

/**
 * PGlite starts PostgreSQL with -F (fsync off). Without it, PostgreSQL syncs the WAL at every commit and the
 * data files at every checkpoint; wal_sync_method=fsync because PGlite's fdatasync() is a no-op while fsync()
 * reaches the file system's fsync operation.
 */
const DURABLE_START_PARAMS = [...PGlite.defaultStartParams.filter((param) => param !== '-F'), '-c', 'wal_sync_method=fsync'];

interface EmscriptenModule {
  FS: { filesystems: { NODEFS: { stream_ops: Record<string, unknown>; tryFSOperation<T>(operation: () => T): T } } };
}

/** PGlite's Node file system, whose fsync (a no-op in Emscripten's NODEFS) syncs the real file */
class SyncingNodeFS extends NodeFS {
  override async init(pg: PGlite, options: Parameters<NodeFS['init']>[1]) {
    const { emscriptenOpts } = await super.init(pg, options);
    const syncFiles = (mod: EmscriptenModule) => {
      const nodefs = mod.FS.filesystems.NODEFS;
      nodefs.stream_ops.fsync = (stream: { nfd: number }) => nodefs.tryFSOperation(() => fs.fsyncSync(stream.nfd));
    };
    return { emscriptenOpts: { ...emscriptenOpts, preRun: [...(emscriptenOpts.preRun ?? []), syncFiles] } };
  }
}

/** fsync every file and directory under dir: initdb writes the new cluster without syncing it */
function syncTree(dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const entryPath = path.join(dir, entry.name);
    if (entry.isDirectory()) syncTree(entryPath);
    else if (entry.isFile()) syncPath(entryPath);
  }
  syncPath(dir);
}

function syncPath(target: string): void {
  const fd = fs.openSync(target, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Opens (creating on first use) the PGlite cluster in pgdata with durable commits. */
export async function openDurablePGlite(pgdata: string): Promise<PGlite> {
  const fresh = !fs.existsSync(path.join(pgdata, 'PG_VERSION'));
  const db = await PGlite.create({ fs: new SyncingNodeFS(pgdata), startParams: DURABLE_START_PARAMS });
  if (fresh) {
    syncTree(pgdata);
    syncPath(path.dirname(pgdata));
  }
  return db;
}

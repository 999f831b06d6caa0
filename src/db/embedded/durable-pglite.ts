// Opens PGlite so that a commit is on disk before it returns (PostgreSQL's fsync switched on and carried to the real
// file), with a page cache sized for a small resident service.
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { NodeFS } from '@electric-sql/pglite/nodefs';
import { MAX_WAL_BYTES } from './layout.ts';

/**
 * WAL segments a checkpoint no longer needs are deleted, not renamed to serve as future ones: a recycled segment
 * keeps its old records past the point written, so rows an erase deleted (src/db/scrub.ts) would stay in pg_wal.
 */
const NO_WAL_RECYCLING = ['-c', 'wal_recycle=off'];

/**
 * PGlite starts PostgreSQL with -F (fsync off). Without it, PostgreSQL syncs the WAL at every commit and the
 * data files at every checkpoint; wal_sync_method=fsync because PGlite's fdatasync() is a no-op while fsync()
 * reaches the file system's fsync operation.
 */
const DURABLE_PARAMS = ['-c', 'wal_sync_method=fsync', ...NO_WAL_RECYCLING];

/**
 * PostgreSQL's page cache, allocated and touched at start inside the WebAssembly heap, which never gives memory
 * back: each MB of it is a MB of the service's memory for good (PGlite's 128 MB default would be most of it). 4 MB
 * holds what ingestion keeps touching (the rollup rows of the day, the ends of the event indexes); a larger cache
 * saves the store's thread about a tenth of its CPU under full ingest and leaves the dashboards' reads as they are,
 * since the data files stay in the OS page cache and a miss is a copy from memory, not a disk read.
 */
const MEMORY_PARAMS = [
  '-c',
  'shared_buffers=4MB',
  // VACUUM's list of dead rows (the table maintenance's and the purges' vacuums) grows up to this in that same heap,
  // so a vacuum after a large purge would keep PostgreSQL's 64 MB default resident for good
  '-c',
  'maintenance_work_mem=16MB',
];

/**
 * PostgreSQL's default max_wal_size (1 GB) lets the WAL grow by up to a gigabyte between checkpoints, more free disk
 * than the durable log's guard could reasonably keep for it; a checkpoint every 128 MB of WAL bounds it.
 */
const WAL_PARAMS = ['-c', `max_wal_size=${MAX_WAL_BYTES / 1024 ** 2}MB`, '-c', 'min_wal_size=32MB'];

export const START_PARAMS = [
  ...PGlite.defaultStartParams.filter((param) => param !== '-F'),
  ...DURABLE_PARAMS,
  ...MEMORY_PARAMS,
  ...WAL_PARAMS,
];

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
export function syncTree(dir: string): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const entryPath = path.join(dir, entry.name);
    if (entry.isDirectory()) syncTree(entryPath);
    else if (entry.isFile()) syncPath(entryPath);
  }
  syncPath(dir);
}

export function syncPath(target: string): void {
  const fd = fs.openSync(target, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Opens the PGlite cluster in pgdata with durable commits; a new cluster is made (initdb) only when create is
 * set: the serving thread never does, so it never carries initdb's memory.
 */
export async function openDurablePGlite(pgdata: string, { create = true }: { create?: boolean } = {}): Promise<PGlite> {
  const fresh = !fs.existsSync(path.join(pgdata, 'PG_VERSION'));
  if (fresh && !create) throw new Error(`${pgdata} holds no database cluster`);
  const db = await PGlite.create({ fs: new SyncingNodeFS(pgdata), startParams: START_PARAMS });
  if (fresh) {
    syncTree(pgdata);
    syncPath(path.dirname(pgdata));
  }
  return db;
}

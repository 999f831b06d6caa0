// Single-owner lock on an embedded data directory: PGlite silently loses rows when two processes open one.
import fs from 'node:fs';
import path from 'node:path';

export interface OwnerRecord {
  pid: number;
  /** process start time (from /proc), guards against a recycled pid */
  started: string;
  /** unix socket where the owner serves operator CLI commands */
  controlSocket: string;
}

export class DataDirBusyError extends Error {
  constructor(dataDir: string, owner: OwnerRecord) {
    super(`${dataDir} is in use by process ${owner.pid}; stop it first or use the operator CLI, which talks to it`);
  }
}

const LOCK_FILE = 'owner.lock';

/** the fields of /proc/<pid>/stat after the command's name (field 3, the state, first); [] when unreadable */
function statFields(pid: number): string[] {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return [];
  }
}

/** field 22 of /proc/<pid>/stat (of its fields as statFields gives them): start time in clock ticks since boot */
const startOf = (fields: string[]): string => fields[19] ?? '';

function processStart(pid: number): string {
  return startOf(statFields(pid));
}

function isAlive(owner: OwnerRecord): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  const fields = statFields(owner.pid);
  // killed but not yet reaped by its parent (a supervisor, a container's PID 1): a zombie holds no file open
  if (fields[0] === 'Z' || fields[0] === 'X') return false;
  const started = startOf(fields);
  return owner.started === '' || started === '' || started === owner.started;
}

function readRecord(file: string): OwnerRecord | null {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as OwnerRecord;
  } catch {
    return null;
  }
}

/** The live owner of dataDir, or null when nobody (alive) holds it. */
export function liveOwner(dataDir: string): OwnerRecord | null {
  const owner = readRecord(path.join(dataDir, LOCK_FILE));
  return owner && owner.pid !== process.pid && isAlive(owner) ? owner : null;
}

/** Takes the lock or throws DataDirBusyError; returns the function that releases it. */
export function acquireOwnerLock(dataDir: string, controlSocket: string): () => void {
  const file = path.join(dataDir, LOCK_FILE);
  const record: OwnerRecord = { pid: process.pid, started: processStart(process.pid), controlSocket };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(record), { flag: 'wx', mode: 0o600 });
      return () => {
        if (readRecord(file)?.pid === process.pid) fs.rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = readRecord(file);
      if (owner && isAlive(owner) && owner.pid !== process.pid) throw new DataDirBusyError(dataDir, owner);
      fs.rmSync(file, { force: true }); // stale lock of a dead process
    }
  }
  throw new Error(`could not take the lock ${file}`);
}

/** Where the owner of dataDir listens for operator commands (a unix socket path must stay short). */
export function controlSocketPath(dataDir: string): string {
  const inDataDir = path.join(dataDir, 'control.sock');
  if (Buffer.byteLength(inDataDir) < 100) return inDataDir;
  const digest = Buffer.from(dataDir).toString('base64url').slice(-24);
  return path.join('/tmp', `tma-analytics-${digest}.sock`);
}

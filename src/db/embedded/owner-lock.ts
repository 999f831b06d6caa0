// Single-owner lock on an embedded data directory: PGlite silently loses rows when two processes open one.
//
// The lock is a listening unix socket whose name derives from the directory's real path. The kernel frees it when its
// process dies, however it dies and whether or not anyone reaps the process, so a start right after `kill -9` finds it
// free; a PID file cannot tell a dead owner from a live one that reuses its PID or from a zombie. On Linux the socket
// lives in the abstract namespace (no file, nothing left behind); elsewhere it is a file in the data directory, and a
// file no one listens on any more is a dead owner's.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export interface OwnerRecord {
  /** the owner's process id, for messages; the socket, not this, is the lock */
  pid: number;
  /** unix socket where the owner serves operator CLI commands */
  controlSocket: string;
}

export class DataDirBusyError extends Error {
  constructor(dataDir: string, owner: OwnerRecord | null) {
    const who = owner ? `process ${owner.pid}` : 'another process';
    super(`${dataDir} is in use by ${who}; stop it first or use the operator CLI, which talks to it`);
  }
}

/** who holds the lock, written once it is held (the lock itself is the socket) */
const RECORD_FILE = 'owner.lock';

/** a socket's path in dataDir, or in /tmp named after dataDir when that path would be too long for a unix socket */
function socketPathIn(dataDir: string, name: string): string {
  const inDataDir = path.join(dataDir, name);
  if (Buffer.byteLength(inDataDir) < 100) return inDataDir;
  const digest = Buffer.from(dataDir).toString('base64url').slice(-24);
  return path.join('/tmp', `tma-analytics-${digest}-${name}`);
}

/** a directory not made yet has no owner, and its name is the one it will have */
function realPath(dataDir: string): string {
  try {
    return fs.realpathSync(dataDir);
  } catch {
    return path.resolve(dataDir);
  }
}

/** The address of dataDir's lock: abstract on Linux, a file in dataDir elsewhere (or when `abstract` is false). */
export function ownerLockAddress(dataDir: string, abstract = process.platform === 'linux'): string {
  if (!abstract) return socketPathIn(dataDir, 'owner.sock');
  const digest = createHash('sha256').update(realPath(dataDir)).digest('base64url').slice(0, 32);
  return `\0tma-analytics-owner:${digest}`;
}

const isAbstract = (address: string) => address.startsWith('\0');

function readRecord(dataDir: string): OwnerRecord | null {
  try {
    return JSON.parse(fs.readFileSync(path.join(dataDir, RECORD_FILE), 'utf8')) as OwnerRecord;
  } catch {
    return null;
  }
}

/** whether a process listens at address now */
function someoneListens(address: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect({ path: address });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}

function listen(address: string): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    // a probe only asks whether someone listens: it is told nothing
    const server = net.createServer((connection) => connection.destroy());
    server.once('error', reject);
    server.listen({ path: address, exclusive: true }, () => {
      server.off('error', reject);
      // the lock never keeps the process alive by itself
      server.unref();
      resolve(server);
    });
  });
}

/** The live owner of dataDir, or null when no process holds it. */
export async function liveOwner(dataDir: string, address = ownerLockAddress(dataDir)): Promise<OwnerRecord | null> {
  if (!(await someoneListens(address))) return null;
  const record = readRecord(dataDir);
  return record && record.pid !== process.pid ? record : null;
}

/** Takes the lock or throws DataDirBusyError; returns the function that releases it. */
export async function acquireOwnerLock(
  dataDir: string,
  controlSocket: string,
  address = ownerLockAddress(dataDir),
): Promise<() => void> {
  let server: net.Server;
  try {
    server = await listen(address);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    // an abstract name in use always has a live owner; a socket file may be left by one that died
    if (isAbstract(address) || (await someoneListens(address)))
      throw new DataDirBusyError(dataDir, readRecord(dataDir));
    fs.rmSync(address, { force: true });
    server = await listen(address).catch((again: NodeJS.ErrnoException) => {
      throw again.code === 'EADDRINUSE' ? new DataDirBusyError(dataDir, readRecord(dataDir)) : again;
    });
  }
  const record: OwnerRecord = { pid: process.pid, controlSocket };
  const recordFile = path.join(dataDir, RECORD_FILE);
  fs.writeFileSync(recordFile, JSON.stringify(record), { mode: 0o600 });
  return () => {
    server.close();
    if (readRecord(dataDir)?.pid === process.pid) fs.rmSync(recordFile, { force: true });
  };
}

/** Where the owner of dataDir listens for operator commands. */
export function controlSocketPath(dataDir: string): string {
  return socketPathIn(dataDir, 'control.sock');
}

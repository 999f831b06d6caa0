// The check of the log's file before it is opened: probe.mjs opens it in a separate process, since some damage makes
// LMDB crash instead of returning an error. Loads no lmdb, so that a start can run it before the log's code loads.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../platform/project-paths.ts';

export const DATA_FILE = 'data.mdb';
const PROBE = path.join(ROOT, 'src', 'log', 'probe.mjs');
/** the probe's exit codes for a file it cannot open (see probe.mjs); a crash by signal says the same */
const PROBE_FOUND_DAMAGE = new Set([3, 4]);

export class DamagedLogError extends Error {}

/**
 * What opening the file in a separate process showed: the damage it found (null: it opened and read through), or,
 * when the probe itself could not run, why (that is no evidence against the file: it is opened directly then).
 */
export interface ProbeOutcome {
  damage: Error | null;
  unusable?: string;
}

/**
 * LMDB's map for a log of maxBytes, address space only: records can take twice their size in pages (see
 * disk-space.ts), plus branch and free pages
 */
export function logMapSize(maxBytes: number): number {
  return 2 * maxBytes + 256 * 1024 ** 2;
}

/** opens the log's file in dir in a separate process; an outcome without damage when there is no file */
export function probeLogFile(dir: string, mapSize: number, usePreviousSnapshot: boolean): Promise<ProbeOutcome> {
  const file = path.join(dir, DATA_FILE);
  if (!fs.existsSync(file)) return Promise.resolve({ damage: null });
  // reading runs at about 200k records a second; a probe far slower than that is stuck on a damaged file
  const timeoutMs = 60_000 + (fs.statSync(file).size / 1024 ** 3) * 60_000;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PROBE, dir, usePreviousSnapshot ? 'previous' : 'latest', String(mapSize)], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => (clearTimeout(timer), resolve({ damage: null, unusable: error.message })));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ damage: null });
      else if (signal !== null || PROBE_FOUND_DAMAGE.has(code!)) {
        const ended = signal ?? `exit code ${code}`;
        resolve({
          damage: new DamagedLogError(`opening it in a separate process ended with ${ended}: ${stderr.trim()}`),
        });
      } else resolve({ damage: null, unusable: `exit code ${code}: ${stderr.trim()}` });
    });
  });
}

/**
 * Starts the check of the latest state of the log in dir (bounded to maxBytes) now, for DurableLog.open's `probed`:
 * it takes a good part of an open and can run while the caller does other work. The probe rewrites the log's
 * watermark record, so the caller makes sure no other process uses the log meanwhile (the owner lock of DATA_DIR).
 */
export function probeLog(dir: string, maxBytes: number): Promise<ProbeOutcome> {
  return probeLogFile(dir, logMapSize(maxBytes), false);
}

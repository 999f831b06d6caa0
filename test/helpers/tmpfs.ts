// A small tmpfs for suites about a full disk: mounted on a fresh directory (needs root; CI runs as root), filled
// with a filler file, unmounted at the end. Without root a suite skips, unless services are required.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { servicesRequired } from './environment.ts';

export interface Tmpfs {
  dir: string;
  /** free bytes on it now */
  free(): number;
  /** writes a filler file until no more than keepFree bytes stay free (0: until the disk refuses) */
  fill(name: string, keepFree?: number): void;
  unmount(): void;
}

/** mounts a tmpfs of sizeMb megabytes, or null when mounting is not allowed here */
export function mountTmpfs(sizeMb: number, prefix = 'tma-tmpfs-'): Tmpfs | null {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m`, 'tmpfs', dir], { encoding: 'utf8' });
  if (result.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    if (servicesRequired)
      throw new Error(`mounting a tmpfs is required (CI=true or REQUIRE_SERVICES=1): ${result.stderr || result.error}`);
    return null;
  }
  const free = () => {
    const stats = fs.statfsSync(dir);
    return stats.bavail * stats.bsize;
  };
  return {
    dir,
    free,
    fill(name, keepFree = 0) {
      const fd = fs.openSync(path.join(dir, name), 'a');
      const chunk = Buffer.alloc(1024 * 1024);
      try {
        for (let size = chunk.length; size >= 4096; size = Math.floor(size / 2)) {
          while (free() - size >= keepFree) {
            try {
              fs.writeSync(fd, chunk, 0, size);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
              throw error;
            }
          }
        }
      } finally {
        fs.closeSync(fd);
      }
    },
    unmount() {
      spawnSync('umount', ['-l', dir]);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// The prebuilt cluster's manifest (src/db/embedded/cluster-template.ts), read and checked: what made it, every directory and
// file it holds, and that none of its paths leads outside the cluster it describes or the one it is copied into.
import fs from 'node:fs';
import path from 'node:path';

export const MANIFEST = 'manifest.json';

export interface Manifest {
  /** the PGlite that made it: another version may not read its files */
  pglite: string;
  /** the migrations it holds (a newer one is applied by the service at start) */
  migrations: string[];
  /**
   * every directory under pgdata, empty ones included: git, archivers and image tools drop empty directories, and
   * PostgreSQL does not start (pg_replslot, pg_twophase…) or fails at its first checkpoint (pg_logical/…) without them
   */
  directories: string[];
  /** every file under pgdata, by its path there, with its SHA-256 */
  files: Record<string, string>;
}

/** the template cannot be used: the message names it and says why (missing, made by another PGlite, a file altered) */
export class ClusterTemplateError extends Error {
  constructor(
    readonly template: string,
    reason: string,
    readonly missing = false,
  ) {
    super(`cluster template ${template}: ${reason}`);
    this.name = 'ClusterTemplateError';
  }
}

const SHA256 = /^[0-9a-f]{64}$/;

/** a path that stays inside whatever directory it is taken from: relative, slash-separated, no "", "." or ".." part */
function staysInside(entry: unknown): entry is string {
  if (typeof entry !== 'string' || entry.includes('\\') || entry.includes('\0')) return false;
  return entry.split('/').every((part) => part !== '' && part !== '.' && part !== '..');
}

/**
 * Where entry lands under root. The manifest was checked already (readManifest); this is the check at the point of
 * use, so no path is ever opened outside root whatever the entry turns out to be.
 */
export function insideRoot(template: string, root: string, entry: string): string {
  const full = path.resolve(root, entry);
  if (!staysInside(entry) || !full.startsWith(`${path.resolve(root)}${path.sep}`)) {
    throw new ClusterTemplateError(template, `its manifest names ${JSON.stringify(entry)}, outside the cluster`);
  }
  return full;
}

/** parent directories first: a path sorts before every path it is a prefix of */
export const parentsFirst = (entries: string[]) => [...entries].sort();

/**
 * The manifest of the template in dir, made by installed (the PGlite version): throws ClusterTemplateError naming dir
 * when it is missing, unreadable, malformed, made by another PGlite, or names a path outside the cluster.
 */
export function readManifest(dir: string, installed: string): Manifest {
  let manifest: Partial<Manifest>;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8')) as Partial<Manifest>;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT' && !fs.existsSync(dir);
    throw new ClusterTemplateError(dir, `no readable manifest: ${(error as Error).message}`, missing);
  }
  const refuse = (reason: string) => new ClusterTemplateError(dir, reason);
  if (manifest === null || typeof manifest !== 'object') throw refuse('its manifest is not an object');
  if (manifest.pglite !== installed) throw refuse(`made by PGlite ${manifest.pglite}, this is ${installed}`);
  const { directories, files } = manifest;
  // a manifest without it comes from a version of the service that did not list directories
  if (!Array.isArray(directories))
    throw refuse('its manifest lists no directories: npm run build:cluster makes it again');
  if (files === null || typeof files !== 'object' || Array.isArray(files) || !Object.hasOwn(files, 'PG_VERSION')) {
    throw refuse('its manifest lists no cluster');
  }
  const outside = [...directories, ...Object.keys(files)].find((entry) => !staysInside(entry));
  if (outside !== undefined) throw refuse(`its manifest names ${JSON.stringify(outside)}, outside the cluster`);
  const listed = new Set<string>(directories);
  const orphan = [...directories, ...Object.keys(files)].find(
    (entry) => entry.includes('/') && !listed.has(path.posix.dirname(entry)),
  );
  if (orphan !== undefined) throw refuse(`its manifest lists ${orphan} but not the directory it is in`);
  const unhashed = Object.entries(files).find(([, hash]) => typeof hash !== 'string' || !SHA256.test(hash));
  if (unhashed) throw refuse(`its manifest gives ${unhashed[0]} no SHA-256`);
  return manifest as Manifest;
}

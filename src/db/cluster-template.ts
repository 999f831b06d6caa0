// A prebuilt, migrated, empty PGlite cluster made once at install time and copied into a new DATA_DIR, so a first
// start skips initdb in WebAssembly (seconds of CPU, most of a gigabyte of memory) and the migrations.
//   node --import tsx src/db/cluster-template.ts [dir]   (npm's postinstall; dir defaults to CLUSTER_TEMPLATE_DIR)
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import { openDurablePGlite, syncPath, syncTree } from './durable-pglite.ts';
import { applyMigrations, MIGRATIONS_DIR } from './migrate.ts';
import type { SqlQueryable, SqlRunner } from './sql.ts';

/** beside the other build outputs (dist/sdk, dist/grammy); derived from the migrations' place, like them */
export const CLUSTER_TEMPLATE_DIR = path.resolve(MIGRATIONS_DIR, '../../dist/embedded-cluster');

const MANIFEST = 'manifest.json';
const COPY_CHUNK_BYTES = 256 * 1024;
const PGDATA = 'pgdata';

interface Manifest {
  /** the PGlite that made it: another version may not read its files */
  pglite: string;
  /** the migrations it holds (a newer one is applied by the service at start) */
  migrations: string[];
  /** every file under pgdata, by its path there, with its SHA-256 */
  files: Record<string, string>;
}

/** the installed PGlite's version (its package.json is not among the package's exports) */
export function pgliteVersion(): string {
  const require = createRequire(import.meta.url);
  let dir = path.dirname(require.resolve('@electric-sql/pglite'));
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return (JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { version: string }).version;
}

function listFiles(root: string, dir = root): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return [`${path.relative(root, full)}/`, ...listFiles(root, full)];
    return entry.isFile() ? [path.relative(root, full)] : [];
  });
}

const sha256 = (bytes: Buffer) => crypto.createHash('sha256').update(bytes).digest('hex');

/** a SqlRunner over a PGlite of this process, for the migrations */
function runnerOf(db: PGlite): SqlRunner {
  const queryable = (session: Pick<PGlite, 'query' | 'exec'>): SqlQueryable => ({
    query: async <Row>(text: string, params?: unknown[]) => (await session.query<Row>(text, params)).rows,
    exec: async (script: string) => void (await session.exec(script)),
  });
  return {
    kind: 'embedded',
    ...queryable(db),
    transaction: (fn) => db.transaction((tx) => fn(queryable(tx))),
    close: () => db.close(),
  };
}

/**
 * Makes the template in dir: a new cluster (initdb), the migrations of migrationsDir applied, closed cleanly, then a
 * manifest of its files written last. It is made beside dir and renamed into place, so dir holds a whole template
 * or none.
 */
export async function buildClusterTemplate(dir = CLUSTER_TEMPLATE_DIR, migrationsDir = MIGRATIONS_DIR): Promise<void> {
  const staging = `${dir}.new-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(path.join(staging, PGDATA), { recursive: true, mode: 0o700 });
  try {
    const db = await openDurablePGlite(path.join(staging, PGDATA), { create: true });
    let migrations: string[];
    try {
      migrations = await applyMigrations(runnerOf(db), migrationsDir);
    } finally {
      await db.close();
    }
    const pgdata = path.join(staging, PGDATA);
    const files = Object.fromEntries(
      listFiles(pgdata)
        .filter((file) => !file.endsWith('/'))
        .map((file) => [file, sha256(fs.readFileSync(path.join(pgdata, file)))]),
    );
    const manifest: Manifest = { pglite: pgliteVersion(), migrations, files };
    fs.writeFileSync(path.join(staging, MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`);
    syncTree(staging);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(staging, dir);
    syncPath(path.dirname(dir));
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** the template cannot be used: the reason says why (missing, made by another PGlite, a file altered) */
export class ClusterTemplateError extends Error {
  constructor(
    message: string,
    readonly missing = false,
  ) {
    super(message);
    this.name = 'ClusterTemplateError';
  }
}

/**
 * Copies the template's cluster into target (a new, empty directory), checking every file against the manifest as
 * it goes; every file and directory of the copy is synced. Throws ClusterTemplateError when the template is missing or does not check out; the
 * caller then makes the cluster with initdb.
 */
export function copyClusterTemplate(dir: string, target: string): void {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(path.join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new ClusterTemplateError(
      `no readable manifest in ${dir}: ${(error as Error).message}`,
      missing && !fs.existsSync(dir),
    );
  }
  const installed = pgliteVersion();
  if (manifest.pglite !== installed) {
    throw new ClusterTemplateError(`${dir} was made by PGlite ${manifest.pglite}, this is ${installed}`);
  }
  const source = path.join(dir, PGDATA);
  const present = listFiles(source);
  const expected = Object.keys(manifest.files ?? {});
  const stray = present.filter((file) => !file.endsWith('/') && !(file in manifest.files));
  if (expected.length === 0 || stray.length > 0 || !expected.includes('PG_VERSION')) {
    throw new ClusterTemplateError(`${dir} does not hold the files its manifest lists`);
  }
  // a file's directory comes before it in the listing
  for (const entry of present.filter((file) => file.endsWith('/'))) fs.mkdirSync(path.join(target, entry), 0o700);
  // through one small buffer: a whole file's buffer (a 16 MB WAL segment) would leave the service's allocator larger
  const chunk = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
  for (const file of expected) {
    let from: number;
    try {
      from = fs.openSync(path.join(source, file), 'r');
    } catch (error) {
      throw new ClusterTemplateError(`${file} of ${dir} cannot be read: ${(error as Error).message}`);
    }
    const to = fs.openSync(path.join(target, file), 'wx', 0o600);
    try {
      const hash = crypto.createHash('sha256');
      for (let read: number; (read = fs.readSync(from, chunk, 0, chunk.length, null)) > 0; ) {
        hash.update(chunk.subarray(0, read));
        fs.writeSync(to, chunk, 0, read);
      }
      if (hash.digest('hex') !== manifest.files[file]) throw new ClusterTemplateError(`${file} of ${dir} was altered`);
      fs.fsyncSync(to);
    } finally {
      fs.closeSync(from);
      fs.closeSync(to);
    }
  }
  for (const entry of present.filter((file) => file.endsWith('/'))) syncPath(path.join(target, entry));
  syncPath(target);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = path.resolve(process.argv[2] ?? CLUSTER_TEMPLATE_DIR);
  const started = performance.now();
  try {
    await buildClusterTemplate(dir);
    console.log(`embedded store: empty cluster made in ${dir} (${Math.round(performance.now() - started)} ms)`);
  } catch (error) {
    // the service works without it (a first start then runs initdb): an install does not fail for it
    console.warn(`embedded store: could not make the empty cluster in ${dir}: ${(error as Error).message}`);
  }
}

// A prebuilt, migrated, empty PGlite cluster made once at install time and copied into a new DATA_DIR, so a first
// start skips initdb in WebAssembly (seconds of CPU, most of a gigabyte of memory) and the migrations.
//   node --import tsx src/db/embedded/cluster-template.ts [dir]   (npm's postinstall; dir defaults to CLUSTER_TEMPLATE_DIR)
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PGlite } from '@electric-sql/pglite';
import {
  ClusterTemplateError,
  insideRoot,
  MANIFEST,
  type Manifest,
  parentsFirst,
  readManifest,
} from './cluster-manifest.ts';
import { openDurablePGlite, syncPath, syncTree } from './durable-pglite.ts';
import { applyMigrations, MIGRATIONS_DIR } from '../migrate.ts';
import type { SqlQueryable, SqlRunner } from '../sql.ts';

/** beside the other build outputs (dist/sdk, dist/grammy); derived from the migrations' place, like them */
export const CLUSTER_TEMPLATE_DIR = path.resolve(MIGRATIONS_DIR, '../../dist/embedded-cluster');

const COPY_CHUNK_BYTES = 256 * 1024;
const PGDATA = 'pgdata';

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
    const entries = listFiles(pgdata);
    const directories = entries.filter((entry) => entry.endsWith('/')).map((entry) => entry.slice(0, -1));
    const files = Object.fromEntries(
      entries
        .filter((entry) => !entry.endsWith('/'))
        .map((file) => [file, sha256(fs.readFileSync(path.join(pgdata, file)))]),
    );
    const manifest: Manifest = { pglite: pgliteVersion(), migrations, directories, files };
    fs.writeFileSync(path.join(staging, MANIFEST), `${JSON.stringify(manifest, null, 1)}\n`);
    syncTree(staging);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(staging, dir);
    syncPath(path.dirname(dir));
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

export { ClusterTemplateError };

/**
 * Copies the template's cluster into target (a new, empty directory), checking every file against the manifest as
 * it goes; every file and directory of the copy is synced. The directories are made from the manifest, so a template
 * that lost its empty ones still gives a whole cluster. Throws ClusterTemplateError, naming the template, when it is
 * missing or does not check out (the caller then makes the cluster with initdb); any other error is the target's.
 */
export async function copyClusterTemplate(dir: string, target: string): Promise<void> {
  const manifest = readManifest(dir, pgliteVersion());
  const source = path.join(dir, PGDATA);
  // what the template holds, symbolic links never followed: a listed path that is one counts as missing
  let present: string[];
  try {
    present = listFiles(source);
  } catch (error) {
    throw new ClusterTemplateError(dir, `its cluster cannot be read: ${(error as Error).message}`);
  }
  const expected = Object.keys(manifest.files);
  const directories = new Set(manifest.directories);
  const stray = present.find((entry) =>
    entry.endsWith('/') ? !directories.has(entry.slice(0, -1)) : !Object.hasOwn(manifest.files, entry),
  );
  const held = new Set(present);
  const lacking = expected.find((file) => !held.has(file));
  if (stray !== undefined || lacking !== undefined) {
    const detail = stray !== undefined ? `${stray} is not in it` : `${lacking} is missing`;
    throw new ClusterTemplateError(dir, `it does not hold the files its manifest lists (${detail})`);
  }
  for (const entry of parentsFirst(manifest.directories)) fs.mkdirSync(insideRoot(dir, target, entry), 0o700);
  // through one small buffer: a whole file's buffer (a 16 MB WAL segment) would leave the service's allocator larger.
  // Reads, writes and syncs run on libuv's pool: a start copying its cluster still answers /healthz at once
  const chunk = Buffer.allocUnsafe(COPY_CHUNK_BYTES);
  for (const file of expected) {
    const [sourceFile, targetFile] = [insideRoot(dir, source, file), insideRoot(dir, target, file)];
    const reading = async <T>(what: () => Promise<T>): Promise<T> => {
      try {
        return await what();
      } catch (error) {
        throw new ClusterTemplateError(dir, `${file} cannot be read: ${(error as Error).message}`);
      }
    };
    const from = await reading(() => fs.promises.open(sourceFile, 'r'));
    let to: fs.promises.FileHandle | undefined;
    try {
      to = await fs.promises.open(targetFile, 'wx', 0o600);
      const hash = crypto.createHash('sha256');
      for (let read: number; (read = (await reading(() => from.read(chunk, 0, chunk.length, null))).bytesRead) > 0; ) {
        hash.update(chunk.subarray(0, read));
        await to.write(chunk, 0, read);
      }
      if (hash.digest('hex') !== manifest.files[file]) throw new ClusterTemplateError(dir, `${file} was altered`);
      await to.sync();
    } finally {
      await from.close();
      await to?.close();
    }
  }
  for (const entry of manifest.directories) syncPath(insideRoot(dir, target, entry));
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

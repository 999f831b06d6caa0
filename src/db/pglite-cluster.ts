// Makes a new PGlite cluster (initdb) in a short-lived child process, so the service's own process never
// carries initdb's memory: PGlite runs initdb in WebAssembly instances of its own, and memory a process has
// grown to is not given back.
//   node --import tsx src/db/pglite-cluster.ts <pgdata>   (what createCluster runs; built: dist/server/pglite-cluster.js)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { entryPoint } from '../project-paths.ts';
import { openDurablePGlite, syncPath } from './durable-pglite.ts';

const hasCluster = (pgdata: string) => fs.existsSync(path.join(pgdata, 'PG_VERSION'));

/**
 * Creates the cluster in a directory next to pgdata, synced, then renames it into place (pgdata is missing or
 * empty): a creation cut short leaves no half-made cluster behind, and of two creators the first rename wins.
 */
async function createClusterHere(pgdata: string): Promise<void> {
  const staging = `${pgdata}.new-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { mode: 0o700 });
  try {
    await (await openDurablePGlite(staging, { create: true })).close();
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

/** Makes the cluster in pgdata unless it holds one, in a child process; rejects with the child's error output. */
export async function createCluster(pgdata: string): Promise<void> {
  if (hasCluster(pgdata)) return;
  if (fs.existsSync(pgdata) && fs.readdirSync(pgdata).length > 0 && !hasCluster(pgdata)) {
    throw new Error(`${pgdata} holds files but no database cluster: move them away, or give an empty DATA_DIR`);
  }
  // from source, the child loads TypeScript through tsx, whatever loader (or none) this process runs under
  const { file, execArgv } = entryPoint('pglite-cluster', import.meta.url);
  const child = spawn(process.execPath, [...execArgv, file, pgdata], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-4_000)));
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  if (exit.code !== 0 || !hasCluster(pgdata)) {
    throw new Error(
      `could not create the database cluster in ${pgdata} (${exit.code ?? exit.signal}): ${errors.trim()}`,
    );
  }
}

// built, this module shares a chunk with the service's: the process runs it when it was started as its entry point
if (process.argv[1] === entryPoint('pglite-cluster', import.meta.url).file) {
  await createClusterHere(path.resolve(process.argv[2]!));
}

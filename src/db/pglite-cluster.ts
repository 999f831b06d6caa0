// Makes a new PGlite cluster: a copy of the prebuilt one (src/db/cluster-template.ts) when it checks out, else initdb
// in a short-lived child process, so the service's own process never carries initdb's memory: PGlite runs initdb in
// WebAssembly instances of its own, and memory a process has grown to is not given back.
//   node --import tsx src/db/pglite-cluster.ts <pgdata>   (what createCluster runs for initdb; built: dist/server/pglite-cluster.js)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { entryFile, entryPoint } from '../project-paths.ts';
import { CLUSTER_TEMPLATE_DIR, ClusterTemplateError, copyClusterTemplate } from './cluster-template.ts';
import { openDurablePGlite, syncPath } from './durable-pglite.ts';

const hasCluster = (pgdata: string) => fs.existsSync(path.join(pgdata, 'PG_VERSION'));

/**
 * Makes the cluster in a directory next to pgdata, synced, then renames it into place (pgdata is missing or empty): a
 * creation cut short leaves no half-made cluster behind, and of two creators the first rename wins.
 */
async function stageCluster(pgdata: string, make: (staging: string) => Promise<void> | void): Promise<void> {
  const staging = `${pgdata}.new-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { mode: 0o700 });
  try {
    await make(staging);
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

/** initdb, in this process (the child createCluster starts) */
const createClusterHere = (pgdata: string) =>
  stageCluster(pgdata, async (staging) => {
    await (await openDurablePGlite(staging, { create: true })).close();
  });

export interface CreateClusterOptions {
  /** the prebuilt cluster to copy (default: the one the install made); null: always initdb */
  template?: string | null;
  /** told why a template that exists could not be used (initdb runs instead) */
  onTemplateRefused?: (reason: string) => void;
}

/** how the cluster came to be: it was there, copied from the template, or made by initdb */
export type ClusterOrigin = 'existing' | 'template' | 'initdb';

/**
 * Makes the cluster in pgdata unless it holds one: a copy of the template, or initdb in a child process when there is
 * no usable template; rejects with the child's error output.
 */
export async function createCluster(pgdata: string, options: CreateClusterOptions = {}): Promise<ClusterOrigin> {
  if (hasCluster(pgdata)) return 'existing';
  if (fs.existsSync(pgdata) && fs.readdirSync(pgdata).length > 0 && !hasCluster(pgdata)) {
    throw new Error(`${pgdata} holds files but no database cluster: move them away, or give an empty DATA_DIR`);
  }
  const template = options.template === undefined ? CLUSTER_TEMPLATE_DIR : options.template;
  if (template !== null) {
    try {
      await stageCluster(pgdata, (staging) => copyClusterTemplate(template, staging));
      return 'template';
    } catch (error) {
      if (!(error instanceof ClusterTemplateError)) throw error;
      if (!error.missing) options.onTemplateRefused?.(error.message);
    }
  }
  await initdbInChild(pgdata);
  return 'initdb';
}

async function initdbInChild(pgdata: string): Promise<void> {
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
if (process.argv[1] === entryFile('pglite-cluster', import.meta.url)) {
  await import('../stack-traces.ts');
  await createClusterHere(path.resolve(process.argv[2]!));
}

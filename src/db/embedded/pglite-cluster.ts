// Makes a new PGlite cluster: a copy of the prebuilt one (src/db/embedded/cluster-template.ts) when it checks out, else initdb
// in a short-lived child process, so the service's own process never carries initdb's memory: PGlite runs initdb in
// WebAssembly instances of its own, and memory a process has grown to is not given back.
//   node --import tsx src/db/embedded/pglite-cluster.ts <dir>   (what createCluster runs for initdb, in its staging directory;
//   built: dist/server/pglite-cluster.js)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { entryFile, entryPoint } from '../../platform/project-paths.ts';
import { CLUSTER_TEMPLATE_DIR, ClusterTemplateError, copyClusterTemplate } from './cluster-template.ts';
import { hasCluster, markUnopened, stageCluster } from './cluster-staging.ts';
import { openDurablePGlite } from './durable-pglite.ts';

export interface CreateClusterOptions {
  /** the prebuilt cluster to copy (default: the one the install made); null: always initdb */
  template?: string | null;
  /** told why a template that exists could not be used (initdb runs instead); the reason names the template */
  onTemplateRefused?: (reason: string) => void;
}

/** how the cluster came to be: it was there, copied from the template, or made by initdb */
export type ClusterOrigin = 'existing' | 'template' | 'initdb';

/** the template the options name: the install's unless given */
export const templateOf = (options: CreateClusterOptions) =>
  options.template === undefined ? CLUSTER_TEMPLATE_DIR : options.template;

/**
 * Makes the cluster in pgdata unless it holds one: a copy of the template (marked as not opened yet, see
 * src/db/embedded/cluster-staging.ts), or initdb in a child process when there is no usable template; rejects with the child's
 * error output.
 */
export async function createCluster(pgdata: string, options: CreateClusterOptions = {}): Promise<ClusterOrigin> {
  if (hasCluster(pgdata)) return 'existing';
  if (fs.existsSync(pgdata) && fs.readdirSync(pgdata).length > 0) {
    throw new Error(`${pgdata} holds files but no database cluster: move them away, or give an empty DATA_DIR`);
  }
  const template = templateOf(options);
  if (template !== null) {
    try {
      await stageCluster(pgdata, async (staging) => {
        await copyClusterTemplate(template, staging);
        markUnopened(staging);
      });
      return 'template';
    } catch (error) {
      if (!(error instanceof ClusterTemplateError)) throw error;
      if (!error.missing) options.onTemplateRefused?.(error.message);
    }
  }
  await stageCluster(pgdata, (staging) => initdbInChild(staging, pgdata));
  return 'initdb';
}

/** initdb into dir (an empty directory, staging the cluster of pgdata) in a child process */
async function initdbInChild(dir: string, pgdata: string): Promise<void> {
  // from source, the child loads TypeScript through tsx, whatever loader (or none) this process runs under
  const { file, execArgv } = entryPoint('pglite-cluster', import.meta.url);
  const child = spawn(process.execPath, [...execArgv, file, dir], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-4_000)));
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  if (exit.code !== 0 || !hasCluster(dir)) {
    throw new Error(
      `could not create the database cluster of ${pgdata} (${exit.code ?? exit.signal}): ${errors.trim()}`,
    );
  }
}

// built, this module shares a chunk with the service's: the process runs it when it was started as its entry point
if (process.argv[1] === entryFile('pglite-cluster', import.meta.url)) {
  await import('../../platform/stack-traces.ts');
  // initdb, synced (openDurablePGlite syncs a new cluster), and closed cleanly
  await (await openDurablePGlite(path.resolve(process.argv[2]!), { create: true })).close();
}

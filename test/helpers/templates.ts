// The stores a run makes once (a migrated PGlite data directory, a migrated PostgreSQL TEMPLATE database) and the
// copies a test takes of them instead of running initdb and the migrations itself.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { EMBEDDED_DIR } from '../../src/db/embedded/layout.ts';
import { available } from './environment.ts';
import { createTestDatabase, type TestDatabase } from './postgres.ts';
import { dropTemplateDatabase, templatePaths } from './template-maker.ts';

/** what the global setup hands the test workers */
export interface StoreTemplates {
  /** a DATA_DIR whose pgdata holds a new embedded cluster, no migration applied (for the migrations' own suites) */
  bareDataDir: string;
  /** a DATA_DIR whose pgdata holds a migrated embedded store */
  dataDir: string;
  /** the migrated TEMPLATE database, null when PostgreSQL does not answer */
  database: string | null;
}

declare module 'vitest' {
  export interface ProvidedContext {
    storeTemplates: StoreTemplates;
  }
}

const MAKER = fileURLToPath(new URL('./template-maker.ts', import.meta.url));
const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** For the global setup: makes the templates (in a child process); `remove` (the teardown) deletes them. */
export async function makeTemplates(): Promise<{ templates: StoreTemplates; remove(): Promise<void> }> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-templates-'));
  const database = (await available('PostgreSQL'))
    ? `tma_template_${process.pid}_${crypto.randomBytes(4).toString('hex')}`
    : null;
  const remove = async () => {
    if (database) await dropTemplateDatabase(database);
    fs.rmSync(root, { recursive: true, force: true });
  };
  const maker = spawn(process.execPath, ['--import', 'tsx', MAKER, root, database ?? '-'], {
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  maker.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString('utf8')).slice(-8_000)));
  const exit = await new Promise<number | string | null>((resolve, reject) => {
    maker.once('error', reject);
    maker.once('close', (code, signal) => resolve(code ?? signal));
  });
  if (exit !== 0) {
    await remove();
    throw new Error(`could not make the store templates (${exit}): ${errors.trim()}`);
  }
  return { templates: { ...templatePaths(root), database }, remove };
}

/** the run's templates, or undefined when the run has no global setup that made them (the copy is skipped then) */
function templates(): StoreTemplates | undefined {
  try {
    return inject('storeTemplates');
  } catch {
    return undefined;
  }
}

/**
 * A fresh DATA_DIR holding a migrated embedded store (bare: a new cluster, no migration applied), copied from the
 * run's template; an empty directory, where the store makes its own, when the run has none.
 */
export async function embeddedDataDir(prefix = 'tma-test-', options: { bare?: boolean } = {}): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const made = templates();
  if (!made) return dir;
  const from = options.bare ? made.bareDataDir : made.dataDir;
  await fs.promises.cp(path.join(from, EMBEDDED_DIR), path.join(dir, EMBEDDED_DIR), { recursive: true });
  return dir;
}

/** A fresh migrated PostgreSQL database, dropped afterwards: a copy of the run's template (else migrated by its user). */
export async function migratedDatabase(): Promise<TestDatabase> {
  const made = templates();
  if (!made?.database) return createTestDatabase();
  return createTestDatabase({ template: made.database });
}

// Every suite that opens the project's store (a backend of test/helpers/stores.ts, itself or through a harness such as
// test/site/api-harness.ts) runs in the project "postgres" too, or is listed as left on the embedded store: a suite
// meant for both stores never runs on one of them unseen.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../helpers/service-process.ts';
import { ON_EMBEDDED_ONLY, ON_POSTGRES } from '../store-suites.ts';
import config from '../vitest.config.ts';

const STORES = 'test/helpers/stores.ts';
/** what test/helpers/stores.ts exports that opens the project's store */
const BACKEND = /\b(?:STORE|SERVICE|BARE)_BACKENDS?\b/;

/** every TypeScript file under dir, project-relative */
function typescriptFiles(dir: string): string[] {
  return fs.readdirSync(path.join(PROJECT_ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const name = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) return typescriptFiles(name);
    return name.endsWith('.ts') ? [name] : [];
  });
}

/** a module's static imports of project files: the module (project-relative) and the names it takes */
function importsOf(file: string): { module: string; names: string }[] {
  const text = fs.readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
  return [...text.matchAll(/^\s*(?:import|export)\s([^'"]*?)from\s+['"](\.[^'"]+)['"]/gm)].map((match) => ({
    module: path.posix.join(path.posix.dirname(file), match[2]!),
    names: match[1]!,
  }));
}

/** the modules of test/ that open the project's store: those that import a backend, or a module that does */
function storeOpeners(): Set<string> {
  const files = typescriptFiles('test').filter((file) => file !== STORES);
  const imports = new Map(files.map((file) => [file, importsOf(file)]));
  const openers = new Set<string>();
  for (let grew = true; grew; ) {
    grew = false;
    for (const [file, modules] of imports) {
      if (openers.has(file)) continue;
      const opens = modules.some(
        ({ module, names }) => (module === STORES && BACKEND.test(names)) || openers.has(module),
      );
      if (opens) {
        openers.add(file);
        grew = true;
      }
    }
  }
  return openers;
}

const openers = storeOpeners();
const suites = [...openers].filter((file) => file.endsWith('.test.ts')).sort();

/** the project of test/vitest.config.ts by that name, as the config gives it */
function project(name: string) {
  const projects = (config.test?.projects ?? []) as { test?: { name?: string; include?: string[]; env?: object } }[];
  return projects.find((entry) => entry.test?.name === name)?.test;
}

describe('the store each suite runs on', () => {
  it('finds the suites that open a store, through the site API harness too', () => {
    expect(openers).toContain('test/site/api-harness.ts');
    expect(suites).toContain('test/site/api-apps.test.ts');
    expect(suites).toContain('test/db/migrations.test.ts');
    expect(suites.length, 'the suites found').toBeGreaterThan(40);
  });

  it('runs every suite that opens a store on PostgreSQL too, unless it is listed as left on the embedded store', () => {
    const unlisted = suites.filter((suite) => !ON_POSTGRES.includes(suite) && !ON_EMBEDDED_ONLY.includes(suite));
    expect(unlisted, 'suites to add to STORE_SUITES (or ON_EMBEDDED_ONLY) in test/store-suites.ts').toEqual([]);
  });

  it('lists only suites that open a store, each once and in one list', () => {
    const listed = [...ON_POSTGRES, ...ON_EMBEDDED_ONLY];
    expect(
      listed.filter((suite) => !suites.includes(suite)),
      'listed but missing, or opening no store',
    ).toEqual([]);
    expect(
      listed.filter((suite, at) => listed.indexOf(suite) !== at),
      'listed twice',
    ).toEqual([]);
  });

  // the project is left out where PostgreSQL does not answer outside CI (test/vitest.config.ts)
  it.runIf(project('postgres'))(
    'gives the project "postgres" that list and TEST_STORE=postgres; the others the embedded store',
    () => {
      expect(project('postgres')).toMatchObject({ include: ON_POSTGRES, env: { TEST_STORE: 'postgres' } });
      expect(project('fast')).toMatchObject({ env: { TEST_STORE: 'embedded' } });
      expect(project('faults')).toMatchObject({ env: { TEST_STORE: 'embedded' } });
    },
  );
});

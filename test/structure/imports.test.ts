// The running service's import graph: walked statically from src/main.ts, it never reaches build tooling
// (esbuild, TypeScript's compiler, the SDK build script), which would cost memory in every server process.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../helpers/service-process.ts';

/** static imports only (`import … from '…'`, `export … from '…'`): what loads when the module loads */
function staticImports(file: string, withTypes = true): string[] {
  const text = fs.readFileSync(file, 'utf8');
  const specifiers: string[] = [];
  for (const match of text.matchAll(/^\s*(?:import|export)\s([^'"]*?)from\s+['"]([^'"]+)['"]/gm))
    if (withTypes || !match[1]!.startsWith('type ')) specifiers.push(match[2]!);
  for (const match of text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) specifiers.push(match[1]!);
  return specifiers;
}

/** every module the entry loads, as project-relative paths for project files and package names for the rest */
function reachable(entry: string, withTypes = true): Set<string> {
  const seen = new Set<string>();
  const queue = [path.join(PROJECT_ROOT, entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    const name = path.relative(PROJECT_ROOT, file);
    if (seen.has(name)) continue;
    seen.add(name);
    for (const specifier of staticImports(file, withTypes)) {
      if (specifier.startsWith('.')) queue.push(path.resolve(path.dirname(file), specifier));
      else seen.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!);
    }
  }
  return seen;
}

/** every project module's static imports of other project modules, as project-relative paths */
function projectImports(): [string, string][] {
  const edges: [string, string][] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(PROJECT_ROOT, dir), { withFileTypes: true })) {
      const name = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(name);
      else if (name.endsWith('.ts')) {
        for (const specifier of staticImports(path.join(PROJECT_ROOT, name))) {
          if (specifier.startsWith('.'))
            edges.push([name, path.relative(PROJECT_ROOT, path.resolve(PROJECT_ROOT, dir, specifier))]);
        }
      }
    }
  };
  walk('src');
  return edges;
}

const DOMAIN = /^src\/(events|tokens|log|db)\//;
const SURFACES = /^src\/(ingest|site|bot|cli|read-api)\/|^src\/ranking\/(routes|schedule)\.ts$/;
const HTTP_APP = /^src\/http\//;

describe('the service imports', () => {
  it('one way: the HTTP app, then the surfaces, then the domain, then the store', () => {
    const edges = projectImports();
    expect(edges.length, 'the walk found the imports').toBeGreaterThan(100);
    const upward = edges.filter(
      ([from, to]) =>
        (DOMAIN.test(from) && (SURFACES.test(to) || HTTP_APP.test(to))) || (SURFACES.test(from) && HTTP_APP.test(to)),
    );
    expect(upward.map(([from, to]) => `${from} → ${to}`)).toEqual([]);
  });

  it('no build tooling when it starts', () => {
    const modules = reachable('src/main.ts');
    expect(modules.has('src/http/app.ts'), 'the walk reaches the HTTP app').toBe(true);
    expect([...modules].filter((name) => ['esbuild', 'typescript', 'src/build-sdk.ts'].includes(name))).toEqual([]);
  });

  it('the CLI loads no store, Prisma or command module before it knows the service answers the command', () => {
    // type-only imports are erased: they load nothing
    const modules = reachable('src/cli/main.ts', false);
    expect(modules.has('src/cli/control-socket.ts'), 'the walk reaches the socket client').toBe(true);
    const heavy = [
      'src/db/store.ts',
      'src/services.ts',
      'src/cli/commands.ts',
      '@prisma/client',
      '@electric-sql/pglite',
    ];
    expect([...modules].filter((name) => heavy.includes(name) || name.includes('prisma-client'))).toEqual([]);
  });
});

// The service's import graph: every module in a layer, imports one way and no folders in a loop; walked from
// src/main.ts, it never reaches build tooling (esbuild, TypeScript's compiler, the SDK build script).
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

/** dynamic imports (`import('…')`): what loads later, on demand */
function dynamicImports(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)].map((match) => match[1]!);
}

/** every project module's imports of other project modules (static, type-only and dynamic), as project-relative paths */
function projectImports(): [string, string][] {
  const edges: [string, string][] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(PROJECT_ROOT, dir), { withFileTypes: true })) {
      const name = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(name);
      else if (name.endsWith('.ts')) {
        const file = path.join(PROJECT_ROOT, name);
        for (const specifier of [...staticImports(file), ...dynamicImports(file)]) {
          if (specifier.startsWith('.'))
            edges.push([name, path.relative(PROJECT_ROOT, path.resolve(PROJECT_ROOT, dir, specifier))]);
        }
      }
    }
  };
  walk('src');
  return edges;
}

/**
 * Every module of src/ in one layer. Imports run from a lower rank to a higher one (the HTTP app, then the surfaces,
 * then what serves the SDK, then the services' wiring, then the domain, then the store, then the platform, which
 * imports no project module); the two packages (the browser SDK, the grammY middleware) are shipped alone, so they
 * import nothing of the service, and the build is run by `npm ci`, never imported by the service.
 */
const LAYERS: { layer: string; rank: number; modules: RegExp }[] = [
  { layer: 'HTTP app', rank: 0, modules: /^src\/main\.ts$|^src\/app\// },
  { layer: 'surface', rank: 1, modules: /^src\/(ingest|site|bot|cli|read-api)\// },
  { layer: 'SDK serving', rank: 1.5, modules: /^src\/sdk-serving\// },
  { layer: 'wiring', rank: 2, modules: /^src\/services\.ts$/ },
  { layer: 'domain', rank: 3, modules: /^src\/(events|tokens|alerts|ranking)\// },
  { layer: 'store', rank: 4, modules: /^src\/(db|log)\// },
  { layer: 'platform', rank: 5, modules: /^src\/platform\// },
  { layer: 'package', rank: -1, modules: /^src\/(sdk|grammy-middleware)\// },
  { layer: 'build', rank: -1, modules: /^src\/build\// },
];

function layerOf(module: string) {
  return LAYERS.find(({ modules }) => modules.test(module));
}

/** folders split by concern: each of their subfolders counts as a folder of its own, so its loops are found too */
const SPLIT_FOLDERS = ['src/events'];

/** the folder a module belongs to (a top-level module is its own; src/events/write/rollups/x.ts is src/events/write's) */
function folderOf(module: string): string {
  const parts = module.split('/');
  if (parts.length > 3 && SPLIT_FOLDERS.includes(parts.slice(0, 2).join('/'))) return parts.slice(0, 3).join('/');
  return parts.length > 2 ? parts.slice(0, 2).join('/') : module;
}

/** why an import breaks the rules, or undefined when it keeps them */
function brokenRule(from: string, to: string): string | undefined {
  const source = layerOf(from);
  const target = layerOf(to);
  if (!source || !target) return 'a module in no layer';
  if (folderOf(from) === folderOf(to)) return undefined;
  if (source.layer === 'package') return 'a package imports the service';
  if (target.layer === 'package') return source.layer === 'build' ? undefined : 'the service imports a package';
  if (target.layer === 'build') return 'the service imports the build';
  if (source.layer === 'build') return undefined;
  if (source.layer === 'surface' && target.layer === 'surface') return 'a surface imports another surface';
  if (target.rank < source.rank) return `the ${source.layer} imports the ${target.layer}`;
  return undefined;
}

/** the loops in a graph of modules or folders: each once, as the list of its members */
function loops(next: Map<string, Set<string>>): string[][] {
  // Tarjan's strongly connected components: a component of more than one member is a loop
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    for (const to of next.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of next.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** the graph of edges between the keys given by keyOf (a module's folder, or the module itself) */
function graphOf(edges: [string, string][], keyOf: (module: string) => string): Map<string, Set<string>> {
  const next = new Map<string, Set<string>>();
  for (const [from, to] of edges) {
    const [a, b] = [keyOf(from), keyOf(to)];
    if (a !== b) next.set(a, (next.get(a) ?? new Set()).add(b));
  }
  return next;
}

describe('the service imports', () => {
  it('one way: the HTTP app, then the surfaces, then the domain, then the store, then the platform; no surface imports another', () => {
    const edges = projectImports();
    expect(edges.length, 'the walk found the imports').toBeGreaterThan(100);
    const broken = edges.flatMap(([from, to]) => {
      const rule = brokenRule(from, to);
      return rule ? [`${from} → ${to}: ${rule}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('has no free zone: the platform imports no project module, and no folder is shared by every layer', () => {
    expect(brokenRule('src/events/read/dashboard.ts', 'src/site/page-shell.ts')).toBe('the domain imports the surface');
    expect(brokenRule('src/platform/metrics.ts', 'src/db/store.ts')).toBe('the platform imports the store');
    expect(brokenRule('src/db/store.ts', 'src/platform/config.ts')).toBeUndefined();
    expect(brokenRule('src/app/serve.ts', 'src/build/build-service.ts')).toBe('the service imports the build');
    const rootModules = fs.readdirSync(path.join(PROJECT_ROOT, 'src')).filter((name) => name.endsWith('.ts'));
    expect(rootModules.sort(), 'src/ holds the entry and the composition root').toEqual(['main.ts', 'services.ts']);
  });

  it('every module of src/ is in a layer', () => {
    const modules = new Set(projectImports().flat());
    expect([...modules].filter((module) => !layerOf(module))).toEqual([]);
  });

  it('no two folders import each other, directly or round a loop', () => {
    expect(loops(graphOf(projectImports(), folderOf))).toEqual([]);
  });

  it('no two modules import each other, inside a folder or across, type-only and dynamic imports included', () => {
    expect(loops(graphOf(projectImports(), (module) => module))).toEqual([]);
  });

  it("events by concern: the request's domain, reads and the data's lifecycle build on the write side, never back", () => {
    const between = new Set(
      projectImports()
        .map(([from, to]) => [folderOf(from), folderOf(to)])
        .filter(([from, to]) => from !== to && from.startsWith('src/events') && to.startsWith('src/events'))
        .map(([from, to]) => `${from} → ${to}`),
    );
    expect(between.has('src/events/read → src/events/write'), 'the walk sees the concerns').toBe(true);
    expect(
      [...between].filter((edge) => edge.startsWith('src/events/write →') && edge !== 'src/events/write → src/events'),
    ).toEqual([]);
    expect([...between].filter((edge) => edge.startsWith('src/events →'))).toEqual([]);
  });

  it('no build tooling when it starts', () => {
    // the start imports the rest of the service (src/app/serve.ts) while its store opens
    const modules = new Set([...reachable('src/main.ts'), ...reachable('src/app/serve.ts')]);
    expect(modules.has('src/app/app.ts'), 'the walk reaches the HTTP app').toBe(true);
    expect([...modules].filter((name) => ['esbuild', 'typescript', 'src/build/build-sdk.ts'].includes(name))).toEqual(
      [],
    );
  });

  it('a service without a bot holds no grammY: the bot loads only when BOT_TOKEN is set', () => {
    // type-only imports are erased: they load nothing
    const modules = new Set([...reachable('src/main.ts', false), ...reachable('src/app/serve.ts', false)]);
    expect(modules.has('src/app/app.ts'), 'the walk reaches the HTTP app').toBe(true);
    expect([...modules].filter((name) => name === 'grammy' || name.startsWith('@grammyjs/'))).toEqual([]);
  });

  it('the CLI loads no store, Prisma or command module before it knows the service answers the command', () => {
    // type-only imports are erased: they load nothing
    const modules = reachable('src/cli/main.ts', false);
    expect(modules.has('src/cli/owner-client.ts'), 'the walk reaches the socket client').toBe(true);
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

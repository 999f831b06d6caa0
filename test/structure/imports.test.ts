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

/**
 * Every module of src/ in one layer. Imports run from a lower rank to a higher one (the HTTP app, then the surfaces,
 * then the services' wiring, then the domain, then the store); shared top-level modules serve every layer, and the
 * two packages (the browser SDK, the grammY middleware) are shipped alone, so they import nothing of the service.
 */
const LAYERS: { layer: string; rank: number; modules: RegExp }[] = [
  { layer: 'HTTP app', rank: 0, modules: /^src\/(main|start|serve)\.ts$|^src\/http\// },
  {
    layer: 'surface',
    rank: 1,
    modules: /^src\/(ingest|site|bot|cli|read-api)\/|^src\/ranking\/(routes|schedule)\.ts$/,
  },
  { layer: 'wiring', rank: 2, modules: /^src\/services\.ts$/ },
  { layer: 'domain', rank: 3, modules: /^src\/(events|tokens|alerts|ranking)\// },
  { layer: 'store', rank: 4, modules: /^src\/(db|log)\// },
  { layer: 'package', rank: -1, modules: /^src\/(sdk|grammy-middleware)\// },
  { layer: 'build', rank: -1, modules: /^src\/build-sdk\.ts$/ },
  { layer: 'shared', rank: -1, modules: /^src\/[^/]+\.ts$/ },
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
  if (source.layer === 'build') return undefined;
  if (target.layer === 'shared') return undefined;
  if (source.layer === 'shared') return target.layer === 'store' ? undefined : 'a shared module imports a layer';
  if (source.layer === 'surface' && target.layer === 'surface') return 'a surface imports another surface';
  if (target.rank < source.rank) return `the ${source.layer} imports the ${target.layer}`;
  return undefined;
}

/** folders (and top-level modules) that import each other, directly or round a longer loop */
function folderCycles(edges: [string, string][]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const [from, to] of edges) {
    const [a, b] = [folderOf(from), folderOf(to)];
    if (a !== b) next.set(a, (next.get(a) ?? new Set()).add(b));
  }
  const reaches = (start: string, goal: string): boolean => {
    const seen = new Set<string>();
    const queue = [...(next.get(start) ?? [])];
    while (queue.length > 0) {
      const folder = queue.pop()!;
      if (folder === goal) return true;
      if (seen.has(folder)) continue;
      seen.add(folder);
      queue.push(...(next.get(folder) ?? []));
    }
    return false;
  };
  const cycles: string[][] = [];
  for (const [from, targets] of next)
    for (const to of targets) if (from < to && reaches(to, from)) cycles.push([from, to]);
  return cycles;
}

describe('the service imports', () => {
  it('one way: the HTTP app, then the surfaces, then the domain, then the store; no surface imports another', () => {
    const edges = projectImports();
    expect(edges.length, 'the walk found the imports').toBeGreaterThan(100);
    const broken = edges.flatMap(([from, to]) => {
      const rule = brokenRule(from, to);
      return rule ? [`${from} → ${to}: ${rule}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('every module of src/ is in a layer', () => {
    const modules = new Set(projectImports().flat());
    expect([...modules].filter((module) => !layerOf(module))).toEqual([]);
  });

  it('no two folders import each other, directly or round a loop', () => {
    expect(folderCycles(projectImports())).toEqual([]);
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
    // the start imports the rest of the service (src/serve.ts) while its store opens
    const modules = new Set([...reachable('src/main.ts'), ...reachable('src/serve.ts')]);
    expect(modules.has('src/http/app.ts'), 'the walk reaches the HTTP app').toBe(true);
    expect([...modules].filter((name) => ['esbuild', 'typescript', 'src/build-sdk.ts'].includes(name))).toEqual([]);
  });

  it('a service without a bot holds no grammY: the bot loads only when BOT_TOKEN is set', () => {
    // type-only imports are erased: they load nothing
    const modules = new Set([...reachable('src/main.ts', false), ...reachable('src/serve.ts', false)]);
    expect(modules.has('src/http/app.ts'), 'the walk reaches the HTTP app').toBe(true);
    expect([...modules].filter((name) => name === 'grammy' || name.startsWith('@grammyjs/'))).toEqual([]);
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

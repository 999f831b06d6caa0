// Where the project's files are, whether this code runs from its source (src/, through tsx) or from its build
// (dist/server/, plain node, see src/build/build-service.ts): this module is two levels below the root either way.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** esbuild's chunks are .js files; the source is .ts */
export const BUILT = !import.meta.url.endsWith('.ts');

/** the project's root: src/platform/ and dist/server/ (where the build puts this module) are two levels below it */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** the built service: its entry points (main.js, cli.js, the embedded store's thread and initdb child) and chunks */
export const SERVER_BUILD_DIR = path.join(ROOT, 'dist', 'server');

/** the file of one of the service's modules run as a process or thread of its own: built entry point or source */
export function entryFile(builtName: string, sourceUrl: string): string {
  return BUILT ? path.join(SERVER_BUILD_DIR, `${builtName}.js`) : fileURLToPath(sourceUrl);
}

/**
 * How to run one of the service's modules as a process of its own: its built entry point with plain node (the entry
 * maps its stack traces to src/, src/platform/stack-traces.ts) when this code is built, else its source through tsx.
 * `builtName` names the entry in src/build/build-service.ts.
 */
export function entryPoint(builtName: string, sourceUrl: string): { file: string; execArgv: string[] } {
  return {
    file: entryFile(builtName, sourceUrl),
    execArgv: BUILT ? [] : ['--import', import.meta.resolve('tsx')],
  };
}

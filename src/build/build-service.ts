// Builds the service for plain node with esbuild into dist/server/: the entry points below as ES modules, the code
// they share in chunks, source maps beside them (src/platform/stack-traces.ts names src/ lines in stack traces with them).
// The HTTP stack's packages are bundled, the others stay in node_modules (EXTERNAL_PACKAGES), the generated Prisma client
// stays in src/db/prisma-client; modules a command loads on demand (`import()`) become chunks of their own, so the CLI
// loads only what its command needs. The event schema's validator is written as code beside them (event-validator.cjs).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { ROOT, SERVER_BUILD_DIR } from '../platform/project-paths.ts';

/** built name → source; a process or thread started on a built name finds it through src/platform/project-paths.ts */
const ENTRY_POINTS = {
  main: 'src/main.ts',
  cli: 'src/cli/main.ts',
  'pglite-thread-worker': 'src/db/embedded/pglite-thread-worker.ts',
  'pglite-cluster': 'src/db/embedded/pglite-cluster.ts',
  'starting-answers': 'src/app/starting-answers.ts',
};

/**
 * Packages left in node_modules, loaded from there at run time; the rest are bundled, which spares a start resolving
 * and reading some four hundred files of the HTTP stack (Fastify, its plugins, prom-client and what they use).
 * Left: what finds files beside itself at run time (native addons, WebAssembly, a package.json), what loads only
 * with a setting or a command, and the build's and tests' own tools.
 */
const EXTERNAL_PACKAGES = [
  // native addons, WebAssembly and data read beside the package, or such a package's adapter
  'lmdb',
  'msgpackr',
  'msgpackr-extract',
  '@electric-sql/pglite',
  '@electric-sql/pglite/*',
  'pglite-prisma-adapter',
  '@prisma/*',
  '@fastify/swagger',
  // worker-thread transports started from their own files
  'pino',
  'thread-stream',
  // the event validator's Ajv: from source only (src/events/request/validate.ts)
  'ajv',
  'ajv/*',
  // with DATABASE_URL, REDIS_URL or BOT_TOKEN only
  'pg',
  'pg-copy-streams',
  'ioredis',
  'grammy',
  '@grammyjs/*',
  '@telegram-apps/*',
  // the build's and the tests' tools
  'esbuild',
  'tsx',
  'prisma',
  'playwright-core',
];

/** Prisma's generated client is CommonJS that finds its files beside itself: imported from where it is */
function prismaClientInPlace(outDir: string): Plugin {
  return {
    name: 'prisma-client-in-place',
    setup(build) {
      build.onResolve({ filter: /\/prisma-client\/index\.js$/ }, (args) => ({
        // every output file is directly in outDir, so one relative path serves them all
        path: path.relative(outDir, path.resolve(args.resolveDir, args.path)).split(path.sep).join('/'),
        external: true,
      }));
    },
  };
}

export async function buildService(): Promise<{ files: number; bytes: number }> {
  // built beside dist/server and swapped in at the end: a process starting meanwhile never reads a half-built one
  const staging = `${SERVER_BUILD_DIR}.tmp-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  const { build } = await import('esbuild');
  try {
    const result = await build({
      absWorkingDir: ROOT,
      entryPoints: ENTRY_POINTS,
      outdir: staging,
      bundle: true,
      splitting: true,
      chunkNames: '[name]-[hash]',
      format: 'esm',
      platform: 'node',
      target: 'node20',
      external: EXTERNAL_PACKAGES,
      // the bundled CommonJS packages require node's modules: an ES module has no require of its own
      banner: {
        js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
      },
      sourcemap: true,
      // the sources are beside the build: the maps point at them rather than carry them
      sourcesContent: false,
      metafile: true,
      logLevel: 'warning',
      plugins: [prismaClientInPlace(SERVER_BUILD_DIR)],
    });
    const sizes = Object.values(result.metafile.outputs).map((output) => output.bytes);
    // the event validator as code, so that the service loads neither Ajv nor its compiler to check events
    const { eventValidatorCode, PREBUILT_VALIDATOR } = await import('../events/request/validate.ts');
    const validatorCode = eventValidatorCode();
    fs.writeFileSync(path.join(staging, path.basename(PREBUILT_VALIDATOR)), validatorCode);
    sizes.push(Buffer.byteLength(validatorCode));
    fs.rmSync(SERVER_BUILD_DIR, { recursive: true, force: true });
    fs.renameSync(staging, SERVER_BUILD_DIR);
    return { files: sizes.length, bytes: sizes.reduce((sum, size) => sum + size, 0) };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { files, bytes } = await buildService();
  console.log(`service built: ${path.relative(ROOT, SERVER_BUILD_DIR)}, ${files} files, ${bytes} bytes`);
}

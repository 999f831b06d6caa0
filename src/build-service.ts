// Builds the service for plain node with esbuild into dist/server/: the entry points below as ES modules, the code
// they share in chunks, source maps beside them (src/stack-traces.ts names src/ lines in stack traces with them).
// Packages stay in node_modules, the generated Prisma client stays in src/db/prisma-client; modules a command loads
// on demand (`import()`) become chunks of their own, so the CLI loads only what its command needs. The event schema's
// validator is written as code beside them (event-validator.cjs).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';
import { ROOT, SERVER_BUILD_DIR } from './project-paths.ts';

/** built name → source; a process or thread started on a built name finds it through src/project-paths.ts */
const ENTRY_POINTS = {
  main: 'src/main.ts',
  cli: 'src/cli/main.ts',
  'pglite-thread-worker': 'src/db/pglite-thread-worker.ts',
  'pglite-cluster': 'src/db/pglite-cluster.ts',
};

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
      packages: 'external',
      sourcemap: true,
      // the sources are beside the build: the maps point at them rather than carry them
      sourcesContent: false,
      metafile: true,
      logLevel: 'warning',
      plugins: [prismaClientInPlace(SERVER_BUILD_DIR)],
    });
    const outputs = Object.values(result.metafile.outputs);
    // the event validator as code, so that the service loads neither Ajv nor its compiler to check events
    const { eventValidatorCode, PREBUILT_VALIDATOR } = await import('./events/request/validate.ts');
    const validatorCode = eventValidatorCode();
    fs.writeFileSync(path.join(staging, path.basename(PREBUILT_VALIDATOR)), validatorCode);
    outputs.push({ bytes: Buffer.byteLength(validatorCode) } as (typeof outputs)[number]);
    fs.rmSync(SERVER_BUILD_DIR, { recursive: true, force: true });
    fs.renameSync(staging, SERVER_BUILD_DIR);
    return { files: outputs.length, bytes: outputs.reduce((sum, output) => sum + output.bytes, 0) };
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { files, bytes } = await buildService();
  console.log(`service built: ${path.relative(ROOT, SERVER_BUILD_DIR)}, ${files} files, ${bytes} bytes`);
}

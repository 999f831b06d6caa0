// Builds the browser SDK with esbuild: dist/sdk/index.js (the script the service serves), dist/sdk/package/
// (ES module, type declarations, package.json) and its `npm pack` tarball dist/sdk/tma-analytics-sdk-<version>.tgz;
// and the grammY middleware package the same way into dist/grammy/package and dist/grammy/tma-analytics-grammy-<version>.tgz.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  GRAMMY_DIR,
  GRAMMY_PACKAGE_DIR,
  GRAMMY_PACKAGE_NAME,
  GRAMMY_TARBALL,
  SDK_DIR,
  SDK_PACKAGE_DIR,
  SDK_PACKAGE_NAME,
  SDK_PACKAGE_VERSION,
  SDK_SCRIPT,
  SDK_TARBALL,
  sdkTarballName,
} from '../sdk-serving/sdk-files.ts';
import { ROOT } from '../platform/project-paths.ts';

export {
  GRAMMY_PACKAGE_DIR,
  GRAMMY_PACKAGE_NAME,
  GRAMMY_TARBALL,
  SDK_DIR,
  SDK_PACKAGE_DIR,
  SDK_PACKAGE_NAME,
  SDK_SCRIPT,
  SDK_TARBALL,
};

// old Android WebViews still open mini apps
const TARGET = ['es2019', 'chrome70', 'safari13'];

/** where a package's source is and which environment its code runs in */
interface DeclarationSource {
  sourceDir: string;
  lib: string[];
  types: string[];
}

const SDK_SOURCE: DeclarationSource = {
  sourceDir: path.join(ROOT, 'src/sdk'),
  lib: ['lib.es2020.d.ts', 'lib.dom.d.ts'],
  types: [],
};

async function emitDeclarations(outDir: string, source: DeclarationSource = SDK_SOURCE): Promise<void> {
  const { default: ts } = await import('typescript');
  const program = ts.createProgram([path.join(source.sourceDir, 'index.ts')], {
    declaration: true,
    emitDeclarationOnly: true,
    rewriteRelativeImportExtensions: true,
    allowImportingTsExtensions: true,
    strict: true,
    target: ts.ScriptTarget.ES2020,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: source.lib,
    types: source.types,
    skipLibCheck: true,
    outDir,
    rootDir: source.sourceDir,
  });
  const result = program.emit();
  const problems = ts.getPreEmitDiagnostics(program).concat(result.diagnostics);
  if (problems.length > 0) throw new Error(ts.formatDiagnostics(problems, ts.createCompilerHost({})));
  // declaration emit keeps the source's ".ts" specifiers; consumers resolve the ".js" ones
  for (const file of fs.readdirSync(outDir).filter((name) => name.endsWith('.d.ts'))) {
    const full = path.join(outDir, file);
    fs.writeFileSync(full, fs.readFileSync(full, 'utf8').replace(/(from '\.\/[\w-]+)\.ts'/g, "$1.js'"));
  }
}

/** `npm pack` of the package directory into outDir: the tarball `npm install <url>` takes, made by npm itself */
function packPackage(packageDir: string, outDir: string, expected = sdkTarballName(SDK_PACKAGE_VERSION)): string {
  const stdout = execFileSync('npm', ['pack', packageDir, '--json', '--ignore-scripts', '--pack-destination', outDir], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    // npm is a .cmd script on Windows, which only a shell runs
    shell: process.platform === 'win32',
  });
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  if (packed?.filename !== expected) throw new Error(`npm pack wrote ${packed?.filename}, expected ${expected}`);
  return path.join(outDir, expected);
}

export async function buildSdk(
  endpoint = process.env.PUBLIC_URL ?? '',
): Promise<{ scriptBytes: number; tarballBytes: number }> {
  // built next to dist/sdk and swapped in at the end: a running service or test never reads a half-built SDK
  const staging = `${SDK_DIR}.tmp-${process.pid}`;
  const packageDir = path.join(staging, path.relative(SDK_DIR, SDK_PACKAGE_DIR));
  fs.rmSync(staging, { recursive: true, force: true });
  // loaded here, not at the top: importing this module for its paths must not load the build's tooling
  const { build } = await import('esbuild');
  try {
    const common = {
      bundle: true,
      minify: true,
      target: TARGET,
      legalComments: 'none' as const,
      logLevel: 'warning' as const,
    };
    await build({
      ...common,
      entryPoints: [path.join(ROOT, 'src/sdk/script.ts')],
      format: 'iife',
      outfile: path.join(staging, path.basename(SDK_SCRIPT)),
    });
    await build({
      ...common,
      entryPoints: [path.join(ROOT, 'src/sdk/index.ts')],
      format: 'esm',
      outfile: path.join(packageDir, 'index.js'),
      define: { __DEFAULT_ENDPOINT__: JSON.stringify(endpoint.replace(/\/+$/, '')) },
    });
    await emitDeclarations(packageDir);
    const manifest = {
      name: SDK_PACKAGE_NAME,
      version: SDK_PACKAGE_VERSION,
      description: 'Analytics SDK for Telegram Mini Apps: launches, hides, custom and TON Connect events',
      license: 'MIT',
      type: 'module',
      main: './index.js',
      module: './index.js',
      types: './index.d.ts',
      exports: { '.': { types: './index.d.ts', import: './index.js' } },
      sideEffects: false,
    };
    fs.writeFileSync(path.join(packageDir, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
    packPackage(packageDir, staging);
    fs.rmSync(SDK_DIR, { recursive: true, force: true });
    fs.renameSync(staging, SDK_DIR);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return { scriptBytes: fs.statSync(SDK_SCRIPT).size, tarballBytes: fs.statSync(SDK_TARBALL).size };
}

/**
 * The grammY middleware: unminified for Node (the integrator's server reads its stack traces), as an ES module for
 * `import` and as CommonJS in `cjs/` for `require` (most grammY bots are CommonJS), each with its declarations;
 * grammy is left to the integrator's own copy as a peer dependency; and its `npm pack` tarball.
 */
export async function buildGrammyPackage(): Promise<{ tarballBytes: number }> {
  const staging = `${GRAMMY_DIR}.tmp-${process.pid}`;
  const packageDir = path.join(staging, path.relative(GRAMMY_DIR, GRAMMY_PACKAGE_DIR));
  fs.rmSync(staging, { recursive: true, force: true });
  const { build } = await import('esbuild');
  try {
    const commonJsDir = path.join(packageDir, 'cjs');
    for (const [format, outDir] of [
      ['esm', packageDir],
      ['cjs', commonJsDir],
    ] as const) {
      await build({
        entryPoints: [path.join(ROOT, 'src/grammy-middleware/index.ts')],
        bundle: true,
        format,
        platform: 'node',
        target: 'node18',
        external: ['grammy'],
        legalComments: 'none',
        logLevel: 'warning',
        outfile: path.join(outDir, 'index.js'),
      });
      await emitDeclarations(outDir, {
        sourceDir: path.join(ROOT, 'src/grammy-middleware'),
        lib: ['lib.es2022.d.ts'],
        types: ['node'],
      });
    }
    // the package is a module: this folder's own manifest makes its .js and .d.ts files CommonJS for Node and tsc
    fs.writeFileSync(path.join(commonJsDir, 'package.json'), `${JSON.stringify({ type: 'commonjs' })}\n`);
    const manifest = {
      name: GRAMMY_PACKAGE_NAME,
      version: SDK_PACKAGE_VERSION,
      description:
        'grammY middleware: /start payloads, commands and Telegram Stars payments from your bot to tma-analytics',
      license: 'MIT',
      type: 'module',
      main: './cjs/index.js',
      module: './index.js',
      types: './index.d.ts',
      exports: {
        '.': {
          import: { types: './index.d.ts', default: './index.js' },
          require: { types: './cjs/index.d.ts', default: './cjs/index.js' },
        },
      },
      engines: { node: '>=18' },
      peerDependencies: { grammy: '^1' },
      sideEffects: false,
    };
    fs.writeFileSync(path.join(packageDir, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
    packPackage(packageDir, staging, path.basename(GRAMMY_TARBALL));
    fs.rmSync(GRAMMY_DIR, { recursive: true, force: true });
    fs.renameSync(staging, GRAMMY_DIR);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return { tarballBytes: fs.statSync(GRAMMY_TARBALL).size };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { scriptBytes, tarballBytes } = await buildSdk();
  console.log(
    `SDK built: ${path.relative(ROOT, SDK_SCRIPT)} ${scriptBytes} bytes, package in ${path.relative(ROOT, SDK_PACKAGE_DIR)}, ` +
      `tarball ${path.relative(ROOT, SDK_TARBALL)} ${tarballBytes} bytes`,
  );
  const grammy = await buildGrammyPackage();
  console.log(`grammY middleware built: tarball ${path.relative(ROOT, GRAMMY_TARBALL)} ${grammy.tarballBytes} bytes`);
}

// Where the built browser SDK and grammY middleware live, what their packages are called and which version they
// are: shared by the build (src/build/build-sdk.ts) and the server, which must not load the build's tooling (esbuild,
// TypeScript's compiler) to find a path.
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../platform/project-paths.ts';

export const SDK_DIR = path.join(ROOT, 'dist', 'sdk');
export const SDK_SCRIPT = path.join(SDK_DIR, 'index.js');
export const SDK_PACKAGE_DIR = path.join(SDK_DIR, 'package');
export const SDK_PACKAGE_NAME = 'tma-analytics-sdk';

/** the package's version is the project's: the service serves and names exactly the SDK it was built with */
export const SDK_PACKAGE_VERSION = (
  JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }
).version;

/** the file name `npm pack` gives a package's tarball, and the name the service serves it under */
export function tarballName(packageName: string, version: string): string {
  return `${packageName}-${version}.tgz`;
}

/** the SDK package's tarball name */
export function sdkTarballName(version: string): string {
  return tarballName(SDK_PACKAGE_NAME, version);
}

export const SDK_TARBALL = path.join(SDK_DIR, sdkTarballName(SDK_PACKAGE_VERSION));

// The grammY middleware package (src/grammy-middleware), built and packed next to the SDK's.
export const GRAMMY_DIR = path.join(ROOT, 'dist', 'grammy');
export const GRAMMY_PACKAGE_DIR = path.join(GRAMMY_DIR, 'package');
export const GRAMMY_PACKAGE_NAME = 'tma-analytics-grammy';
export const GRAMMY_TARBALL = path.join(GRAMMY_DIR, tarballName(GRAMMY_PACKAGE_NAME, SDK_PACKAGE_VERSION));

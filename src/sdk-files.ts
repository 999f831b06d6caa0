// Where the built browser SDK lives and what its package is called: shared by the build (src/build-sdk.ts)
// and the server, which must not load the build's tooling (esbuild, TypeScript's compiler) to find a path.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const SDK_DIR = path.join(ROOT, 'dist', 'sdk');
export const SDK_SCRIPT = path.join(SDK_DIR, 'index.js');
export const SDK_PACKAGE_DIR = path.join(SDK_DIR, 'package');
export const SDK_PACKAGE_NAME = 'tma-analytics-sdk';

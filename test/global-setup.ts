// vitest globalSetup: rebuild the browser SDK (dist/sdk) once per run, so GET /index.js and the package
// under test are always built from the current src/sdk.
import { buildSdk } from '../src/build-sdk.ts';

export default async function setup(): Promise<void> {
  await buildSdk();
}

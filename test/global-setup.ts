// vitest globalSetup: rebuild the browser SDK (dist/sdk) and the grammY middleware (dist/grammy) once per run, so
// GET /index.js and the packages under test are always built from the current src/sdk and src/grammy-middleware.
import { buildGrammyPackage, buildSdk } from '../src/build-sdk.ts';

export default async function setup(): Promise<void> {
  await buildSdk();
  await buildGrammyPackage();
}

// vitest globalSetup: rebuild the browser SDK (dist/sdk), the grammY middleware (dist/grammy) and the service
// (dist/server) once per run, so GET /index.js, the packages and the built service under test are always built from
// the current src/.
import { buildGrammyPackage, buildSdk } from '../src/build-sdk.ts';
import { buildService } from '../src/build-service.ts';

export default async function setup(): Promise<void> {
  await buildSdk();
  await buildGrammyPackage();
  await buildService();
}

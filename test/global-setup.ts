// vitest globalSetup: rebuild the browser SDK (dist/sdk), the grammY middleware (dist/grammy) and the service
// (dist/server) once per run, so GET /index.js, the packages and the built service under test are always built from
// the current src/; and make the run's store templates, which the suites copy instead of running initdb and the
// migrations.
import type { TestProject } from 'vitest/node';
import { buildGrammyPackage, buildSdk } from '../src/build/build-sdk.ts';
import { buildService } from '../src/build/build-service.ts';
import { makeTemplates } from './helpers/templates.ts';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [made, built] = await Promise.allSettled([
    makeTemplates(),
    buildSdk().then(buildGrammyPackage).then(buildService),
  ]);
  if (made.status === 'rejected') throw made.reason;
  if (built.status === 'rejected') {
    await made.value.remove();
    throw built.reason;
  }
  project.provide('storeTemplates', made.value.templates);
  return made.value.remove;
}

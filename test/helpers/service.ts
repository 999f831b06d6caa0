// Runs the real service in the test process on an ephemeral port, over a fresh store (a copy of the run's template).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/platform/config.ts';
import { openStore, type Store } from '../../src/db/store.ts';
import { buildApp, type AppOptions } from '../../src/app/app.ts';
import { createServices, type Services } from '../../src/services.ts';
import { embeddedDataDir } from './templates.ts';

export interface TestService {
  url: string;
  app: FastifyInstance;
  services: Services;
  store: Store;
  dataDir: string;
  /** resolves once the store holds every event the service acknowledged (the loader has caught up with its log) */
  loaded(): Promise<void>;
  /** issues a token for a new app on the given domain */
  createApp(appName: string, domain?: string): Promise<string>;
  close(): Promise<void>;
}

export function tempDir(prefix = 'tma-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function startTestService(
  env: Record<string, string> = {},
  serverOptions: AppOptions = {},
): Promise<TestService> {
  // on PostgreSQL the data directory holds only the durable log, so it starts empty
  const dataDir = env.DATA_DIR ?? (env.DATABASE_URL ? tempDir() : await embeddedDataDir());
  const config = loadConfig({ LOG_LEVEL: 'silent', HOST: '127.0.0.1', PORT: '0', ...env, DATA_DIR: dataDir });
  const store = await openStore(config);
  const services = await createServices(config, store);
  const app = await buildApp(services, serverOptions);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${address.port}`,
    app,
    services,
    store,
    dataDir,
    async loaded() {
      // generous: a loaded machine can keep the loader from its store for long
      if (!(await services.ingestLog!.loader.caughtUp(180_000)))
        throw new Error('the loader did not catch up with the log (every acknowledged event stored) within 180 s');
    },
    async createApp(appName, domain = 'app.example.com') {
      const { token } = await services.registry.createApp(
        { appName, bot: '@test_app_bot', domains: [domain] },
        { surface: 'cli' },
      );
      return token;
    },
    async close() {
      await app.close();
      await services.stop();
      await store.close();
    },
  };
}

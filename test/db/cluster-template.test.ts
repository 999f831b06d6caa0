// A new DATA_DIR starts from the prebuilt empty cluster (with the migrations made after it applied at start) and
// takes events; a template that is altered, made by another PGlite or missing is not used, and initdb runs instead.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { buildClusterTemplate, ClusterTemplateError, copyClusterTemplate } from '../../src/db/cluster-template.ts';
import { openDurablePGlite } from '../../src/db/durable-pglite.ts';
import { MIGRATIONS_DIR } from '../../src/db/migrate.ts';
import { createCluster } from '../../src/db/pglite-cluster.ts';
import { openStore } from '../../src/db/store.ts';
import { buildApp } from '../../src/http/app.ts';
import { createServices } from '../../src/services.ts';
import { makeEvent } from '../helpers/events.ts';
import { tempDir } from '../helpers/service.ts';

const MIGRATIONS = fs
  .readdirSync(MIGRATIONS_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

/** a folder with every committed migration but the last: the template lags one migration behind the code */
function migrationsButLast(): string {
  const dir = tempDir('tma-migrations-');
  for (const name of MIGRATIONS.slice(0, -1)) {
    fs.cpSync(path.join(MIGRATIONS_DIR, name), path.join(dir, name), { recursive: true });
  }
  return dir;
}

/** a copy of the template to spoil */
function copyOf(template: string): string {
  const copy = path.join(tempDir('tma-template-'), 'template');
  fs.cpSync(template, copy, { recursive: true });
  return copy;
}

async function selectOne(pgdata: string): Promise<unknown> {
  const db = await openDurablePGlite(pgdata, { create: false });
  try {
    return (await db.query('SELECT 1 AS one')).rows;
  } finally {
    await db.close();
  }
}

describe('prebuilt empty cluster', () => {
  let template: string;
  beforeAll(async () => {
    template = path.join(tempDir('tma-template-'), 'template');
    await buildClusterTemplate(template, migrationsButLast());
  }, 240_000);
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('gives a new DATA_DIR every migration (the newer ones applied at start), and the service takes events', async () => {
    const dataDir = tempDir();
    const opened = new Date();
    const refusals: string[] = [];
    const store = await openStore(
      { dataDir },
      { clusterTemplate: template, onClusterTemplateRefused: (reason) => refusals.push(reason) },
    );
    cleanups.push(() => store.close());
    expect(refusals).toEqual([]);
    const applied = await store.sql.query<{ migration_name: string; finished_at: Date }>(
      `SELECT migration_name, finished_at FROM "_prisma_migrations" ORDER BY migration_name`,
    );
    expect(applied.map((row) => row.migration_name)).toEqual(MIGRATIONS);
    // the template's migrations were applied when it was made, the last one by this start
    expect(applied.slice(0, -1).every((row) => new Date(row.finished_at) < opened)).toBe(true);
    expect(new Date(applied.at(-1)!.finished_at) >= opened).toBe(true);

    const config = loadConfig({ LOG_LEVEL: 'silent', DATA_DIR: dataDir, SECRET: 'template-test-'.padEnd(48, 'x') });
    const services = await createServices(config, store);
    cleanups.push(() => services.stop());
    const app = await buildApp(services);
    cleanups.push(() => app.close());
    const { token } = await services.registry.createApp(
      { appName: 'template_app', bot: '@template_app_bot', domains: ['template.example.com'] },
      { surface: 'cli' },
    );
    const response = await app.inject({
      method: 'POST',
      url: '/events',
      headers: { 'content-type': 'application/json', origin: 'https://template.example.com', 'tga-auth-token': token },
      payload: JSON.stringify(makeEvent('template_app')),
    });
    expect(response.statusCode, response.body).toBe(201);
    expect(await services.ingestLog!.loader.caughtUp(60_000), 'the loader stored the event within 60 s').toBe(true);
    expect(await store.sql.query(`SELECT count(*)::int AS events FROM events`)).toEqual([{ events: 1 }]);
  }, 240_000);

  it('refuses a template with an altered file, a stray file or another PGlite version', () => {
    const altered = copyOf(template);
    const control = path.join(altered, 'pgdata', 'global', 'pg_control');
    const bytes = fs.readFileSync(control);
    bytes[100] = bytes[100]! ^ 0xff;
    fs.writeFileSync(control, bytes);
    const stray = copyOf(template);
    fs.writeFileSync(path.join(stray, 'pgdata', 'base', 'stray'), 'not of the cluster');
    const otherVersion = copyOf(template);
    const manifest = JSON.parse(fs.readFileSync(path.join(otherVersion, 'manifest.json'), 'utf8'));
    fs.writeFileSync(path.join(otherVersion, 'manifest.json'), JSON.stringify({ ...manifest, pglite: '0.0.1' }));

    for (const [spoilt, reason] of [
      [altered, /global\/pg_control .* was altered/],
      [stray, /does not hold the files its manifest lists/],
      [otherVersion, /made by PGlite 0\.0\.1/],
    ] as const) {
      let refused: unknown;
      try {
        copyClusterTemplate(spoilt, tempDir());
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(ClusterTemplateError);
      expect((refused as Error).message).toMatch(reason);
    }
  });

  it('falls back to initdb when the template was altered, and says why', async () => {
    const altered = copyOf(template);
    fs.appendFileSync(path.join(altered, 'pgdata', 'PG_VERSION'), ' ');
    const dataDir = tempDir();
    const pgdata = path.join(dataDir, 'pgdata');
    const refusals: string[] = [];
    const origin = await createCluster(pgdata, {
      template: altered,
      onTemplateRefused: (reason) => refusals.push(reason),
    });
    expect(origin).toBe('initdb');
    expect(refusals).toEqual([expect.stringMatching(/PG_VERSION .* was altered/)]);
    expect(fs.readdirSync(dataDir)).toEqual(['pgdata']); // no staging directory left behind
    expect(await selectOne(pgdata)).toEqual([{ one: 1 }]);
  }, 240_000);

  it('falls back to initdb when there is no template, without a warning', async () => {
    const pgdata = path.join(tempDir(), 'pgdata');
    const refusals: string[] = [];
    const origin = await createCluster(pgdata, {
      template: path.join(tempDir(), 'never-built'),
      onTemplateRefused: (reason) => refusals.push(reason),
    });
    expect(origin).toBe('initdb');
    expect(refusals).toEqual([]);
    expect(await selectOne(pgdata)).toEqual([{ one: 1 }]);
  }, 240_000);

  it('copies the template whole, once, when two creators race for the same directory', async () => {
    const dataDir = tempDir();
    const pgdata = path.join(dataDir, 'pgdata');
    fs.mkdirSync(pgdata);
    const origins = await Promise.all([createCluster(pgdata, { template }), createCluster(pgdata, { template })]);
    expect(origins).toContain('template');
    expect(fs.readdirSync(dataDir)).toEqual(['pgdata']);
    expect(await selectOne(pgdata)).toEqual([{ one: 1 }]);
  }, 120_000);
});

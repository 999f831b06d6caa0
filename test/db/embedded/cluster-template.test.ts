// A new DATA_DIR starts from the prebuilt empty cluster (with the migrations made after it applied at start) and
// takes events; a template that is altered, made by another PGlite, names a path outside the cluster, does not open or
// is missing is not used, and initdb runs instead; one that lost its empty directories still gives a whole cluster.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/platform/config.ts';
import {
  buildClusterTemplate,
  ClusterTemplateError,
  copyClusterTemplate,
} from '../../../src/db/embedded/cluster-template.ts';
import { openDurablePGlite } from '../../../src/db/embedded/durable-pglite.ts';
import { MIGRATIONS_DIR } from '../../../src/db/migrate.ts';
import { createCluster } from '../../../src/db/embedded/pglite-cluster.ts';
import { startPGliteThread } from '../../../src/db/embedded/pglite-thread.ts';
import { openStore } from '../../../src/db/store.ts';
import { buildApp } from '../../../src/app/app.ts';
import { createServices } from '../../../src/services.ts';
import { makeEvent } from '../../helpers/events.ts';
import { tempDir } from '../../helpers/service.ts';

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

/** the directories under dir, by their path there */
function directoriesOf(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

/** removes the empty directories under dir, and those left empty by that, as git and archivers drop them */
function dropEmptyDirectories(dir: string): string[] {
  const dropped: string[] = [];
  for (let empty = ['']; empty.length > 0; ) {
    empty = directoriesOf(dir).filter((entry) => fs.readdirSync(path.join(dir, entry)).length === 0);
    for (const entry of empty) fs.rmdirSync(path.join(dir, entry));
    dropped.push(...empty);
  }
  return dropped.sort();
}

/** the manifest of a template, changed by edit (the file hashes left as they are) */
function editManifest(template: string, edit: (manifest: Record<string, unknown>) => void): void {
  const file = path.join(template, 'manifest.json');
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8'));
  edit(manifest);
  fs.writeFileSync(file, JSON.stringify(manifest));
}

const sha256 = (bytes: string) => crypto.createHash('sha256').update(bytes).digest('hex');

/** every file and directory under dir, by its path there */
const treeOf = (dir: string) => fs.readdirSync(dir, { recursive: true }).map(String).sort();

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

  it('refuses a template with an altered file, a stray file, another PGlite version or an older manifest', async () => {
    const altered = copyOf(template);
    const control = path.join(altered, 'pgdata', 'global', 'pg_control');
    const bytes = fs.readFileSync(control);
    bytes[100] = bytes[100]! ^ 0xff;
    fs.writeFileSync(control, bytes);
    const stray = copyOf(template);
    fs.writeFileSync(path.join(stray, 'pgdata', 'base', 'stray'), 'not of the cluster');
    const olderVersion = copyOf(template);
    editManifest(olderVersion, (manifest) => delete manifest.directories);
    const otherVersion = copyOf(template);
    const manifest = JSON.parse(fs.readFileSync(path.join(otherVersion, 'manifest.json'), 'utf8'));
    fs.writeFileSync(path.join(otherVersion, 'manifest.json'), JSON.stringify({ ...manifest, pglite: '0.0.1' }));

    for (const [spoilt, reason] of [
      [altered, /: global\/pg_control was altered/],
      [stray, /does not hold the files its manifest lists \(base\/stray is not in it\)/],
      [otherVersion, /made by PGlite 0\.0\.1/],
      [olderVersion, /lists no directories: npm run build:cluster makes it again/],
    ] as const) {
      let refused: unknown;
      try {
        await copyClusterTemplate(spoilt, tempDir());
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(ClusterTemplateError);
      expect((refused as Error).message).toMatch(reason);
      expect((refused as Error).message).toContain(`cluster template ${spoilt}: `);
    }
  });

  it('makes every directory of the cluster when the template lost its empty ones, and the store starts and checkpoints', async () => {
    const whole = directoriesOf(path.join(template, 'pgdata'));
    const stripped = copyOf(template);
    const dropped = dropEmptyDirectories(path.join(stripped, 'pgdata'));
    // PostgreSQL's empty directories: without pg_replslot, pg_twophase, pg_commit_ts or pg_notify it does not start,
    // without pg_logical/mappings or pg_logical/snapshots its first checkpoint fails
    expect(dropped).toEqual(
      expect.arrayContaining([
        ...['pg_replslot', 'pg_twophase', 'pg_commit_ts', 'pg_notify', 'pg_logical/mappings', 'pg_logical/snapshots'],
      ]),
    );
    // all of them lost at once (each one is made from the manifest alike): the store starts from the template (no
    // refusal, no initdb), checkpoints, starts again, and holds every directory the template had
    const dataDir = tempDir();
    const opened = new Date();
    const refusals: string[] = [];
    for (const start of ['first', 'second']) {
      const store = await openStore(
        { dataDir },
        { clusterTemplate: stripped, onClusterTemplateRefused: (reason) => refusals.push(reason) },
      );
      try {
        const applied = await store.sql.query<{ finished_at: Date }>(
          `SELECT finished_at FROM "_prisma_migrations" ORDER BY migration_name`,
        );
        // the template's migrations were applied when it was made: the cluster is its copy
        expect(new Date(applied[0]!.finished_at) < opened, start).toBe(true);
        await store.sql.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (1); CHECKPOINT');
        await store.sql.exec('DROP TABLE kept');
      } finally {
        await store.close();
      }
    }
    expect(refusals).toEqual([]);
    expect(directoriesOf(path.join(dataDir, 'pgdata'))).toEqual(whole);
  }, 240_000);

  it('refuses a manifest that names a path outside the cluster, naming the template, and writes nothing outside', async () => {
    // each entry's file is there, outside the template, with its hash in the manifest: only the check stops the copy
    for (const [kind, entry] of [
      ['files', '../../outside'],
      ['files', 'base/../../../outside'],
      ['files', '/tmp/outside'],
      ['directories', '../outside-dir'],
      ['directories', 'base/../..'],
    ] as const) {
      const root = tempDir('tma-outside-');
      const spoilt = path.join(root, 'templates', 'template');
      fs.cpSync(template, spoilt, { recursive: true });
      fs.writeFileSync(path.join(root, 'templates', 'outside'), 'from outside the template');
      editManifest(spoilt, (manifest) => {
        if (kind === 'files') (manifest.files as Record<string, string>)[entry] = sha256('from outside the template');
        else (manifest.directories as string[]).push(entry);
      });
      const dataDir = path.join(root, 'data', 'store');
      const target = path.join(dataDir, 'pgdata.new-1-abcdef');
      fs.mkdirSync(target, { recursive: true });
      const before = treeOf(root).filter((file) => !file.startsWith(path.join('data', 'store', 'pgdata.new-')));

      let refused: unknown;
      try {
        await copyClusterTemplate(spoilt, target);
      } catch (error) {
        refused = error;
      }
      expect(refused, entry).toBeInstanceOf(ClusterTemplateError);
      expect((refused as Error).message).toBe(
        `cluster template ${spoilt}: its manifest names ${JSON.stringify(entry)}, outside the cluster`,
      );
      expect(fs.readdirSync(target), entry).toEqual([]); // refused before anything is copied
      expect(treeOf(root).filter((file) => !file.startsWith(path.join('data', 'store', 'pgdata.new-')))).toEqual(
        before,
      );
      expect(fs.existsSync('/tmp/outside'), entry).toBe(false);
    }
  });

  it('throws away a copy that checks out but does not open, makes the store by initdb, and names the template', async () => {
    // a template that lost an empty directory and whose manifest was made without it: every file checks out
    const broken = copyOf(template);
    fs.rmdirSync(path.join(broken, 'pgdata', 'pg_replslot'));
    editManifest(broken, (manifest) => {
      manifest.directories = (manifest.directories as string[] | undefined)?.filter((entry) => entry !== 'pg_replslot');
    });
    const dataDir = tempDir();
    const pgdata = path.join(dataDir, 'pgdata');
    const refusals: string[] = [];
    for (const start of ['first', 'second']) {
      const db = await startPGliteThread(
        pgdata,
        { budgetMs: 60_000, queueLimit: 8 },
        { template: broken, onTemplateRefused: (reason) => refusals.push(reason) },
      );
      try {
        expect((await db.query('SELECT 1 AS one')).rows, start).toEqual([{ one: 1 }]);
      } finally {
        await db.close();
      }
    }
    // told once: the second start opens the cluster initdb made
    expect(refusals).toEqual([expect.stringMatching(/^cluster template .*: its copy did not open: /)]);
    expect(refusals[0]).toContain(`cluster template ${broken}: `);
    expect(fs.readdirSync(dataDir)).toEqual(['pgdata']);
    expect(fs.readdirSync(path.join(pgdata, 'pg_replslot'))).toEqual([]);
  }, 240_000);

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
    expect(refusals).toEqual([`cluster template ${altered}: PG_VERSION was altered`]);
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

// Makes a run's store templates in a child process of the global setup (whose module runner cannot start PGlite's
// cluster maker); exits non-zero, with the error on stderr, when one could not be made:
//   node --import tsx test/helpers/template-maker.ts <root> <database name, or - without PostgreSQL>
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMBEDDED_DIR } from '../../src/db/embedded/layout.ts';
import { applyMigrations } from '../../src/db/migrate.ts';
import { createCluster } from '../../src/db/embedded/pglite-cluster.ts';
import { openServerDatabase } from '../../src/db/server.ts';
import { openStore } from '../../src/db/store.ts';
import { admin, databaseUrl } from './postgres.ts';

/** where the templates of a run made in root live */
export function templatePaths(root: string) {
  return {
    bareDataDir: path.join(root, 'bare'),
    dataDir: path.join(root, 'embedded'),
  };
}

/** a new cluster, no migration applied: made by initdb, never copied from the install's prebuilt (migrated) one */
async function makeBare(bareDataDir: string): Promise<void> {
  fs.mkdirSync(bareDataDir, { recursive: true });
  await createCluster(path.join(bareDataDir, EMBEDDED_DIR), { template: null });
}

/** a copy of the bare cluster, migrated */
async function makeEmbedded(bareDataDir: string, dataDir: string): Promise<void> {
  await fs.promises.cp(path.join(bareDataDir, EMBEDDED_DIR), path.join(dataDir, EMBEDDED_DIR), { recursive: true });
  const store = await openStore({ dataDir });
  await store.close();
}

async function makePostgres(name: string): Promise<void> {
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  const sql = openServerDatabase(databaseUrl(name));
  try {
    await applyMigrations(sql);
  } finally {
    await sql.close();
  }
  // nobody may connect to it: CREATE DATABASE … TEMPLATE refuses a template that has a session
  await admin((client) => client.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`));
}

/** drops a template database, if it is there */
export async function dropTemplateDatabase(name: string): Promise<void> {
  await admin(async (client) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) return;
    await client.query(`ALTER DATABASE ${name} WITH IS_TEMPLATE false`);
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** template databases of runs whose process is gone (a run killed before its teardown) */
async function dropAbandoned(): Promise<void> {
  const rows = await admin((client) =>
    client.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'tma\\_template\\_%'`),
  );
  for (const { datname } of rows.rows) {
    const pid = Number(/^tma_template_(\d+)_/.exec(datname)?.[1]);
    if (pid && !alive(pid)) await dropTemplateDatabase(datname).catch(() => {});
  }
}

async function makeAll(root: string, database: string | null): Promise<void> {
  const { bareDataDir, dataDir } = templatePaths(root);
  await Promise.all([
    makeBare(bareDataDir).then(() => makeEmbedded(bareDataDir, dataDir)),
    database ? dropAbandoned().then(() => makePostgres(database)) : undefined,
  ]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [root, database] = process.argv.slice(2);
  await makeAll(path.resolve(root!), database && database !== '-' ? database : null);
}

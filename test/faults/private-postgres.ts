// A private PostgreSQL server for one suite: initdb in a temporary directory, started and stopped with
// pg_ctl on a free port, so a test may stop the real server under load without touching the shared one.
// Runs the binaries as the `postgres` user (via runuser) when the tests run as root, as CI does.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../helpers/service-process.ts';

const run = promisify(execFile);

/** the bin directory of the newest installed PostgreSQL (Debian layout), or null when there is none */
export function postgresBinDir(): string | null {
  const explicit = process.env.TEST_POSTGRES_BIN;
  if (explicit) return fs.existsSync(path.join(explicit, 'pg_ctl')) ? explicit : null;
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((v) => /^\d+$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  for (const version of versions) {
    const dir = path.join(root, version, 'bin');
    if (fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'pg_ctl'))) return dir;
  }
  return null;
}

export interface PrivatePostgres {
  port: number;
  /** connection URL of the given database on this server */
  url(database?: string): string;
  start(): Promise<void>;
  /** pg_ctl stop (fast by default: clients are disconnected, the server shuts down cleanly) */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  /** stops (immediately) and removes the data directory */
  destroy(): Promise<void>;
  log(): string;
}

export async function createPrivatePostgres(binDir: string): Promise<PrivatePostgres> {
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-private-pg-'));
  const dataDir = path.join(dir, 'data');
  const socketDir = path.join(dir, 'socket');
  const logFile = path.join(dir, 'postgres.log');
  fs.mkdirSync(socketDir);
  fs.writeFileSync(logFile, '');
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    for (const entry of [dir, socketDir, logFile]) fs.chownSync(entry, Number(stdout.trim()), Number(gid.trim()));
  }
  const exec = (binary: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(binDir, binary), ...args])
      : run(path.join(binDir, binary), args);

  await exec('initdb', [
    '-D',
    dataDir,
    '-U',
    'postgres',
    '--auth=trust',
    '-E',
    'UTF8',
    '--no-sync',
    '--no-instructions',
  ]);
  const port = await freePort();
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${socketDir} -c max_connections=50 -c shared_buffers=32MB`;
  const url = (database = 'postgres') => `postgresql://postgres@127.0.0.1:${port}/${database}`;
  const server: PrivatePostgres = {
    port,
    url,
    async start() {
      await exec('pg_ctl', ['start', '-D', dataDir, '-w', '-t', '60', '-l', logFile, '-o', options]);
    },
    async stop(mode = 'fast') {
      await exec('pg_ctl', ['stop', '-D', dataDir, '-w', '-t', '60', '-m', mode]);
    },
    async destroy() {
      await exec('pg_ctl', ['stop', '-D', dataDir, '-w', '-t', '30', '-m', 'immediate']).catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    },
    log: () => {
      try {
        return fs.readFileSync(logFile, 'utf8').slice(-4_000);
      } catch {
        return '';
      }
    },
  };
  await server.start();
  return server;
}

export async function createDatabase(server: PrivatePostgres, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: server.url() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return server.url(name);
}

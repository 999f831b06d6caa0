// An embedded commit must be on disk when it returns (a 201 survives a power loss), and a new cluster is synced whole.
import fs from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDurablePGlite } from '../../../src/db/embedded/durable-pglite.ts';
import { tempDir } from '../../helpers/service.ts';

const pgdata = path.join(tempDir(), 'pgdata');
/** the files fsync reached, in order */
const synced: string[] = [];
let db: PGlite;
let clusterFiles: string[];
/** the files synced while the cluster was created: its own, whatever the tests sync later */
let clusterSyncs: string[];

/** the files fsync reached while action ran */
async function syncedDuring(action: () => Promise<unknown>): Promise<string[]> {
  const from = synced.length;
  await action();
  return synced.slice(from);
}

function filesUnder(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name));
}

beforeAll(async () => {
  const fsync = fs.fsyncSync;
  vi.spyOn(fs, 'fsyncSync').mockImplementation((fd) => {
    synced.push(fs.readlinkSync(`/proc/self/fd/${fd}`));
    fsync(fd);
  });
  fs.mkdirSync(pgdata, { recursive: true });
  db = await openDurablePGlite(pgdata);
  clusterFiles = filesUnder(pgdata);
  await db.exec('CREATE TABLE durable_check (id int PRIMARY KEY)');
  clusterSyncs = [...synced];
});
afterAll(async () => {
  await db?.close();
  vi.restoreAllMocks();
});

describe('embedded durability', () => {
  it('syncs every file of a newly created cluster', () => {
    expect(clusterFiles.length).toBeGreaterThan(100);
    const unsynced = clusterFiles.filter((file) => !clusterSyncs.includes(file));
    expect(unsynced).toEqual([]);
  });

  it('syncs the write-ahead log before a commit returns', async () => {
    for (const id of [1, 2, 3]) {
      const commitSyncs = await syncedDuring(() => db.query('INSERT INTO durable_check VALUES ($1)', [id]));
      expect(commitSyncs.some((file) => file.startsWith(path.join(pgdata, 'pg_wal') + path.sep))).toBe(true);
    }
    expect((await db.query('SHOW fsync')).rows).toEqual([{ fsync: 'on' }]);
  });

  it('syncs the data files at a checkpoint', async () => {
    const checkpointSyncs = await syncedDuring(() => db.exec('CHECKPOINT'));
    const table = (await db.query<{ file: string }>(`SELECT pg_relation_filepath('durable_check') AS file`)).rows[0]!
      .file;
    expect(checkpointSyncs).toContain(path.join(pgdata, table));
  });
});

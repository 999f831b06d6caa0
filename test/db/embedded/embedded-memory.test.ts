// The embedded store's memory settings reach PostgreSQL on a new and on a reopened data directory (with
// durability unchanged), and the service's own PGlite thread never runs initdb: a new cluster is made by
// a child process and appears whole.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDurablePGlite } from '../../../src/db/embedded/durable-pglite.ts';
import { createCluster } from '../../../src/db/embedded/pglite-cluster.ts';
import { openStore } from '../../../src/db/store.ts';
import { tempDir } from '../../helpers/service.ts';

const show = async (store: Awaited<ReturnType<typeof openStore>>, setting: string) =>
  Object.values((await store.sql.query<Record<string, string>>(`SHOW ${setting}`))[0]!)[0];

describe('embedded store memory', () => {
  it('runs with 4 MB of shared buffers and fsync on, on a new and on a reopened data directory', async () => {
    const dataDir = tempDir();
    for (const state of ['new', 'reopened']) {
      const store = await openStore({ dataDir });
      try {
        expect(await show(store, 'shared_buffers'), state).toBe('4MB');
        expect(await show(store, 'fsync'), state).toBe('on');
        expect(await show(store, 'wal_sync_method'), state).toBe('fsync');
      } finally {
        await store.close();
      }
    }
  });

  it('refuses to serve a directory without a cluster instead of running initdb in the serving thread', async () => {
    const pgdata = path.join(tempDir(), 'pgdata');
    fs.mkdirSync(pgdata);
    await expect(openDurablePGlite(pgdata, { create: false })).rejects.toThrow(/holds no database cluster/);
    expect(fs.readdirSync(pgdata)).toEqual([]);
  });

  it('makes a new cluster whole, once, when two creators race for the same directory', async () => {
    const dataDir = tempDir();
    const pgdata = path.join(dataDir, 'pgdata');
    fs.mkdirSync(pgdata);
    await Promise.all([createCluster(pgdata), createCluster(pgdata)]);
    expect(fs.readdirSync(dataDir)).toEqual(['pgdata']); // no staging directory left behind
    const db = await openDurablePGlite(pgdata, { create: false });
    try {
      expect((await db.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  });

  it('refuses a directory that holds files but no cluster, and leaves them as they are', async () => {
    const pgdata = path.join(tempDir(), 'pgdata');
    fs.mkdirSync(pgdata);
    fs.writeFileSync(path.join(pgdata, 'stray'), 'not a cluster');
    await expect(createCluster(pgdata)).rejects.toThrow(/holds files but no database cluster/);
    expect(fs.readdirSync(pgdata)).toEqual(['stray']);
    expect(fs.readdirSync(path.dirname(pgdata))).toEqual(['pgdata']);
  });
});

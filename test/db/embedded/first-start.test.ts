// A first start cut short at any point (during the copy of the template, before its rename into place, before or
// during the copy's first open) leaves nothing the next start uses: that start removes it, copies the template again
// and opens; a store whose first start finished is kept whatever is left beside it.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClusterTemplate, copyClusterTemplate } from '../../../src/db/embedded/cluster-template.ts';
import { UNOPENED_MARK } from '../../../src/db/embedded/cluster-staging.ts';
import { openEmbeddedDatabase } from '../../../src/db/embedded/index.ts';
import { createCluster } from '../../../src/db/embedded/pglite-cluster.ts';
import { spawnThread } from '../../../src/db/embedded/pglite-thread-spawn.ts';
import type { SqlRunner } from '../../../src/db/sql.ts';
import { tempDir } from '../../helpers/service.ts';

/** a staging directory as a start of another process (or of a former one with this pid, as in a container) names it */
const stagingOf = (dataDir: string, pid = 4_000_000) => path.join(dataDir, `pgdata.new-${pid}-k1ll3d`);

describe('a first start cut short', () => {
  let template: string;
  let files: string[];
  /** the template copied into an empty directory, once: that copy syncs every file, a plain copy of it is cheap */
  let copyOfTemplate: string;
  beforeAll(async () => {
    template = path.join(tempDir('tma-template-'), 'template');
    await buildClusterTemplate(template);
    files = Object.keys(JSON.parse(fs.readFileSync(path.join(template, 'manifest.json'), 'utf8')).files);
    copyOfTemplate = path.join(tempDir('tma-copy-'), 'pgdata');
    fs.mkdirSync(copyOfTemplate);
    await copyClusterTemplate(template, copyOfTemplate);
  }, 240_000);
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  /** a start on dataDir: its cluster made from the template (never initdb) and answering; then `use` runs on it */
  async function start(dataDir: string, use?: (sql: SqlRunner) => Promise<void>): Promise<void> {
    const refusals: string[] = [];
    const { sql } = await openEmbeddedDatabase(
      dataDir,
      { budgetMs: 60_000 },
      { template, onTemplateRefused: (reason) => refusals.push(reason) },
    );
    try {
      expect(await sql.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
      await use?.(sql);
    } finally {
      await sql.close();
    }
    expect(refusals).toEqual([]);
  }

  /** a whole copy of the template in dir, as the copy leaves it before the rename */
  function wholeCopy(dir: string): void {
    fs.cpSync(copyOfTemplate, dir, { recursive: true, errorOnExist: true, force: false });
    fs.writeFileSync(path.join(dir, UNOPENED_MARK), '');
  }

  /**
   * A copy killed after `copied` files, the next one half written (the copy writes the manifest's files in order,
   * after every directory); pgdata is the empty directory the start made before copying.
   */
  function killedWhileCopying(copied: number, pid?: number): string {
    const dataDir = tempDir();
    fs.mkdirSync(path.join(dataDir, 'pgdata'));
    const staging = stagingOf(dataDir, pid);
    wholeCopy(staging);
    fs.rmSync(path.join(staging, UNOPENED_MARK));
    const [cut, ...unwritten] = files.slice(copied);
    for (const file of unwritten) fs.rmSync(path.join(staging, file));
    if (cut) fs.truncateSync(path.join(staging, cut), Math.floor(fs.statSync(path.join(staging, cut)).size / 2));
    return dataDir;
  }

  it('during the copy, at its first file, halfway or at its last: the next start copies again and removes the rest', async () => {
    const points = [0, Math.floor(files.length / 2), files.length - 1];
    for (const [index, copied] of points.entries()) {
      // the last one as a start of this very pid would have left it (a container's service is often pid 1)
      const dataDir = killedWhileCopying(copied, index === points.length - 1 ? process.pid : undefined);
      await start(dataDir);
      expect(fs.readdirSync(dataDir), `${copied} files copied`).toEqual(['pgdata']);
      expect(fs.existsSync(path.join(dataDir, 'pgdata', UNOPENED_MARK))).toBe(false);
      await start(dataDir); // and again: the store stands
    }
  }, 240_000);

  it('after the copy, before its rename into place: the next start copies again and removes the staging', async () => {
    const dataDir = tempDir();
    fs.mkdirSync(path.join(dataDir, 'pgdata'));
    wholeCopy(stagingOf(dataDir));
    await start(dataDir);
    expect(fs.readdirSync(dataDir)).toEqual(['pgdata']);
    await start(dataDir);
  }, 240_000);

  it('after the rename, before the first open: the copy in place is replaced, never used', async () => {
    const dataDir = tempDir();
    const pgdata = path.join(dataDir, 'pgdata');
    expect(await createCluster(pgdata, { template })).toBe('template');
    expect(fs.existsSync(path.join(pgdata, UNOPENED_MARK))).toBe(true);
    // a sign of this very copy (PostgreSQL leaves files it does not know alone)
    fs.writeFileSync(path.join(pgdata, 'left-by-the-killed-start'), '');
    await start(dataDir);
    expect(fs.existsSync(path.join(pgdata, 'left-by-the-killed-start'))).toBe(false);
    expect(fs.existsSync(path.join(pgdata, UNOPENED_MARK))).toBe(false);
    expect(fs.readdirSync(dataDir)).toEqual(['pgdata']);
    await start(dataDir);
  }, 240_000);

  it('while the copy was opening: the engine killed before the start saw it open, the copy is replaced', async () => {
    const dataDir = tempDir();
    const pgdata = path.join(dataDir, 'pgdata');
    wholeCopy(pgdata); // in place with its mark, as createCluster leaves it (the test before checks that)
    fs.writeFileSync(path.join(pgdata, 'left-by-the-killed-start'), '');
    // PostgreSQL opened it and was ended at once, as a kill leaves it (no clean shutdown)
    const thread = await spawnThread(pgdata, () => {});
    await thread.kill();
    await start(dataDir);
    expect(fs.existsSync(path.join(pgdata, 'left-by-the-killed-start'))).toBe(false);
    expect(fs.readdirSync(dataDir)).toEqual(['pgdata']);
    await start(dataDir);
  }, 240_000);

  it('never replaces a store whose first start finished, and removes what a killed creation left beside it', async () => {
    const dataDir = tempDir();
    await start(dataDir, (sql) => sql.exec('CREATE TABLE kept (n int); INSERT INTO kept VALUES (42)'));
    fs.mkdirSync(stagingOf(dataDir));
    fs.writeFileSync(path.join(stagingOf(dataDir), 'PG_VERSION'), '17\n');

    const again = await openEmbeddedDatabase(dataDir, { budgetMs: 60_000 }, { template });
    cleanups.push(() => again.sql.close());
    expect(await again.sql.query('SELECT n FROM kept')).toEqual([{ n: 42 }]);
    expect(fs.readdirSync(dataDir)).toEqual(['pgdata']);
  }, 240_000);
});

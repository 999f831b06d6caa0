// The embedded store on a disk that fills up (a small tmpfs): PGlite meets ENOSPC allocating its next WAL segment and
// is left wedged (every later statement failing); the thread handle reopens the data directory by itself, so once
// space returns statements succeed again and every committed row is there, without restarting the service.
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { startPGliteThread, type PGliteHandle } from '../../../src/db/embedded/pglite-thread.ts';
import { mountTmpfs } from '../../helpers/tmpfs.ts';

const disk = mountTmpfs(96, 'tma-pglite-full-');
let db: PGliteHandle | undefined;

afterAll(async () => {
  await db?.close();
  disk?.unmount();
});

const ROWS_PER_INSERT = 2_000;
const insert = (handle: PGliteHandle) =>
  handle.query(`INSERT INTO filled (v) SELECT repeat('x', 500) FROM generate_series(1, ${ROWS_PER_INSERT})`);

describe.runIf(disk)('PGlite on a full disk', () => {
  it('reopens by itself after ENOSPC wedged it, keeping every committed row', async () => {
    db = await startPGliteThread(path.join(disk!.dir, 'pgdata'), { budgetMs: 60_000, queueLimit: 8 });
    await db.exec('CREATE TABLE filled (id serial PRIMARY KEY, v text)');
    // less than the 16 MB WAL segment PGlite allocates next
    disk!.fill('filler', 10 * 1024 ** 2);
    let committed = 0;
    let failure: unknown;
    while (failure === undefined) {
      await insert(db).then(
        () => (committed += ROWS_PER_INSERT),
        (error: unknown) => (failure = error),
      );
    }
    expect(committed).toBeGreaterThan(0);

    fs.rmSync(path.join(disk!.dir, 'filler'));
    // no restart of anything: the same handle answers again within a few seconds
    const deadline = performance.now() + 30_000;
    let count: number | undefined;
    while (count === undefined && performance.now() < deadline) {
      count = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM filled').then(
        (result) => result.rows[0]!.n,
        () => undefined,
      );
      if (count === undefined) await sleep(200);
    }
    expect(count, `the store answers again after ${String(failure)}`).toBe(committed);
    await insert(db);
    expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM filled')).rows[0]!.n).toBe(
      committed + ROWS_PER_INSERT,
    );
  });
});

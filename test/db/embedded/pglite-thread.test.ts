// The embedded store runs PGlite on a thread of its own: what callers see through it must be what PGlite
// itself gives (typed values, rolled-back transactions, database errors Prisma can map).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUniqueViolation } from '../../../src/db/errors.ts';
import { spawnThread } from '../../../src/db/embedded/pglite-thread-spawn.ts';
import { openStore, type Store } from '../../../src/db/store.ts';
import { embeddedDataDir } from '../../helpers/stores.ts';

let store: Store;

beforeAll(async () => {
  store = await openStore({ dataDir: await embeddedDataDir() });
  await store.sql.exec(
    'CREATE TABLE thread_check (id int PRIMARY KEY, at timestamptz, data bytea, doc jsonb, tags text[])',
  );
});
afterAll(() => store?.close());

const count = async () => (await store.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM thread_check'))[0]!.n;

describe('PGlite on its own thread', () => {
  it('gives values their types: dates, bytes, JSON, arrays, numbers', async () => {
    await store.sql.query(
      `INSERT INTO thread_check VALUES (1, '2026-11-22T06:00:00.123Z', '\\x00ff10', '{"a":[1,"x"]}', '{one,two}')`,
    );
    const [row] = await store.sql.query<Record<string, unknown>>('SELECT * FROM thread_check WHERE id = $1', [1]);
    expect(row!.id).toBe(1);
    expect(row!.at).toEqual(new Date('2026-11-22T06:00:00.123Z'));
    expect(Buffer.from(row!.data as Uint8Array).toString('hex')).toBe('00ff10');
    expect(row!.doc).toEqual({ a: [1, 'x'] });
    expect(row!.tags).toEqual(['one', 'two']);
  });

  it('takes bytes as the bytea parameter of a named statement, every byte as it was', async () => {
    const bytes = Buffer.from([0x00, 0x27, 0x5c, 0x78, 0xff, 0x22, 0x0a]); // NUL, quote, backslash, x, 0xff, ", newline
    const [row] = await store.sql.query<{ data: Uint8Array; length: number }>(
      `SELECT $1::bytea AS data, octet_length($1::bytea) AS length`,
      [bytes],
      { name: 'thread_check_bytes' },
    );
    expect(Buffer.from(row!.data).equals(bytes)).toBe(true);
    expect(row!.length).toBe(bytes.length);
  });

  it('rolls a transaction back when its work throws, and keeps it when it completes', async () => {
    const before = await count();
    await expect(
      store.sql.transaction(async (tx) => {
        await tx.query('INSERT INTO thread_check (id) VALUES (2)');
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect(await count()).toBe(before);
    await store.sql.transaction((tx) => tx.query('INSERT INTO thread_check (id) VALUES (3)'));
    expect(await count()).toBe(before + 1);
  });

  it('reports database errors with their SQLSTATE, in raw SQL and through Prisma', async () => {
    await store.sql.query('INSERT INTO thread_check (id) VALUES (10)');
    await expect(store.sql.query('INSERT INTO thread_check (id) VALUES (10)')).rejects.toMatchObject({ code: '23505' });
    await store.prisma.setting.create({ data: { key: 'thread_check', value: 'a' } });
    const duplicate = await store.prisma.setting
      .create({ data: { key: 'thread_check', value: 'b' } })
      .catch((error: unknown) => error);
    expect(isUniqueViolation(duplicate), String(duplicate)).toBe(true);
    expect((duplicate as { cause?: unknown }).cause).toMatchObject({ kind: 'postgres', code: '23505' }); // mapped by the adapter
    // Prisma's interactive transaction, rolled back by the error inside it
    await expect(
      store.prisma.$transaction(async (tx) => {
        await tx.setting.update({ where: { key: 'thread_check' }, data: { value: 'c' } });
        throw new Error('abandon');
      }),
    ).rejects.toThrow('abandon');
    expect((await store.prisma.setting.findUnique({ where: { key: 'thread_check' } }))?.value).toBe('a');
  });

  it('refuses work once closed', async () => {
    const other = await openStore({ dataDir: await embeddedDataDir() });
    await other.close();
    await expect(other.sql.query('SELECT 1')).rejects.toThrow(/stopped/);
  });

  it('reports a directory it cannot open as the failure of its start', async () => {
    const pgdata = fs.mkdtempSync(path.join(os.tmpdir(), 'thread-no-cluster-'));
    try {
      await expect(spawnThread(pgdata, () => {})).rejects.toThrow(/holds no database cluster/);
    } finally {
      fs.rmSync(pgdata, { recursive: true, force: true });
    }
  });
});

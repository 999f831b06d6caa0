// The durable log in one process: order and numbering across restarts, batched reads, release and the backlog stats,
// the refusals at the bound and at the disk headroom, a data file that grows only with its records, and close.
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { DurableLog, LogClosedError, LogFullError } from '../../src/log/durable-log.ts';
import { Backlog } from '../../src/log/backlog.ts';
import { HEADER_BYTES, crc32ForTests, decodeRecord, encodeRecord } from '../../src/log/record-format.ts';
import { dataFile, flipByte, logDir, offsetsOf, payload, recordingLogger, removeTempDirs } from './log-helpers.ts';
import zlib from 'node:zlib';

afterAll(removeTempDirs);

/** whether the promise has already settled, without waiting for anything but queued microtasks */
async function settledAtOnce(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  for (let i = 0; i < 5; i++) await Promise.resolve();
  return settled;
}

describe('durable log', () => {
  it('keeps records in the order appended, under growing sequence numbers, and reads them back in batches', async () => {
    const dir = logDir();
    const log = await DurableLog.open(dir);
    const before = Date.now();
    const seqs = await Promise.all(Array.from({ length: 100 }, (_, i) => log.append(payload(i))));
    const after = Date.now();
    expect(seqs).toEqual(seqs.map((_, i) => seqs[0]! + i));

    const first = log.read(0, { maxRecords: 30 });
    expect(first.map((record) => record.seq)).toEqual(seqs.slice(0, 30));
    expect(first.map((record) => record.value.toString())).toEqual(
      seqs.slice(0, 30).map((_, i) => payload(i).toString()),
    );
    for (const record of first)
      expect(record.appendedAt).toBeGreaterThanOrEqual(before), expect(record.appendedAt).toBeLessThanOrEqual(after);

    const rest = log.read(first[29]!.seq, { maxRecords: 1000 });
    expect(rest.map((record) => record.seq)).toEqual(seqs.slice(30));
    // a later read does not change what an earlier one returned
    expect(first[0]!.value.toString()).toBe(payload(0).toString());

    // maxBytes counts the caller's bytes: 250 bytes hold two 100-byte records; one record always comes back
    expect(log.read(0, { maxBytes: 250 }).map((record) => record.seq)).toEqual(seqs.slice(0, 2));
    expect(log.read(0, { maxBytes: 1 }).map((record) => record.seq)).toEqual(seqs.slice(0, 1));
    expect(log.read(seqs[99]!)).toEqual([]);
    await log.close();
  });

  it('continues numbering after a restart, and never hands out a released number again', async () => {
    const dir = logDir();
    let log = await DurableLog.open(dir);
    const seqs = await Promise.all([1, 2, 3, 4, 5].map((i) => log.append(payload(i))));
    await log.release(seqs[4]!);
    expect(log.stats()).toMatchObject({
      records: 0,
      bytes: 0,
      oldestAppendedAt: null,
      lastSeq: seqs[4],
      releasedThrough: seqs[4],
    });
    await log.close();

    log = await DurableLog.open(dir);
    expect(log.stats()).toMatchObject({ records: 0, lastSeq: seqs[4], releasedThrough: seqs[4] });
    expect(log.read(0)).toEqual([]);
    const next = await log.append(payload('next'));
    expect(next).toBeGreaterThan(seqs[4]!);
    await log.close();

    log = await DurableLog.open(dir);
    expect(log.read(0).map((record) => [record.seq, record.value.toString()])).toEqual([
      [next, payload('next').toString()],
    ]);
    expect(await log.append(payload('after'))).toBeGreaterThan(next);
    await log.close();
  });

  it('keeps the backlog stats without scanning, and finds the same after reopening', async () => {
    const dir = logDir();
    let log = await DurableLog.open(dir);
    expect(log.stats()).toEqual({ records: 0, bytes: 0, oldestAppendedAt: null, lastSeq: 0, releasedThrough: 0 });
    const sizes = [10, 300, 50, 4000, 20, 7];
    const seqs: number[] = [];
    const times: number[] = [];
    for (const size of sizes) {
      seqs.push(await log.append(Buffer.alloc(size, 1)));
      times.push(log.read(seqs.at(-1)! - 1, { maxRecords: 1 })[0]!.appendedAt);
    }
    expect(log.stats()).toEqual({
      records: 6,
      bytes: sizes.reduce((sum, size) => sum + size, 0),
      oldestAppendedAt: times[0],
      lastSeq: seqs[5],
      releasedThrough: 0,
    });

    await log.release(seqs[2]!);
    const expected = {
      records: 3,
      bytes: 4000 + 20 + 7,
      oldestAppendedAt: times[3],
      lastSeq: seqs[5],
      releasedThrough: seqs[2],
    };
    expect(log.stats()).toEqual(expected);
    expect(log.read(0).map((record) => record.seq)).toEqual(seqs.slice(3));
    await log.close();

    log = await DurableLog.open(dir);
    expect(log.stats()).toEqual(expected);
    await log.close();
  });

  it('rejects a release beyond the last durable record', async () => {
    const log = await DurableLog.open(logDir());
    const seq = await log.append(payload(1));
    await expect(log.release(seq + 1)).rejects.toThrow(RangeError);
    expect(log.stats().records).toBe(1);
    await log.close();
  });

  it('refuses an append beyond maxBytes at once, writing nothing, and takes appends again once records are released', async () => {
    const dir = logDir();
    const log = await DurableLog.open(dir, { maxBytes: 1000 });
    const seqs = await Promise.all([1, 2, 3, 4].map((i) => log.append(payload(i, 200))));
    const stats = log.stats();
    const size = fs.statSync(dataFile(dir)).size;

    const refused = log.append(payload('too much', 201));
    expect(await settledAtOnce(refused)).toBe(true);
    const error = await refused.catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(LogFullError);
    expect((error as LogFullError).reason).toBe('max-bytes');
    expect(log.stats()).toEqual(stats);
    expect(fs.statSync(dataFile(dir)).size).toBe(size);

    // exactly up to the bound is fine
    expect(await log.append(payload('fits', 200))).toBe(seqs[3]! + 1);
    await log.release(seqs[1]!);
    expect(await log.append(payload('room again', 400))).toBe(seqs[3]! + 2);
    await log.close();
  });

  it('refuses an append at once when the disk would keep less than the free-space headroom', async () => {
    const dir = logDir();
    const log = await DurableLog.open(dir, { minFreeBytes: Number.MAX_SAFE_INTEGER });
    const size = fs.statSync(dataFile(dir)).size;
    const refused = log.append(payload(1));
    expect(await settledAtOnce(refused)).toBe(true);
    const error = await refused.catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(LogFullError);
    expect((error as LogFullError).reason).toBe('disk-headroom');
    expect(log.stats().records).toBe(0);
    expect(fs.statSync(dataFile(dir)).size).toBe(size);
    await log.close();

    const roomy = await DurableLog.open(dir, { minFreeBytes: 1024 });
    await expect(roomy.append(payload(1))).resolves.toBeGreaterThan(0);
    await roomy.close();
  });

  it('grows its data file with the records written, not with maxBytes', async () => {
    const dir = logDir();
    const log = await DurableLog.open(dir, { maxBytes: 1024 ** 3 });
    await Promise.all(Array.from({ length: 50 }, (_, i) => log.append(payload(i, 200))));
    const stat = fs.statSync(dataFile(dir));
    expect(stat.size).toBeLessThan(1024 ** 2);
    expect(stat.blocks * 512).toBeLessThan(1024 ** 2);
    await log.close();
  });

  it('frees the pages of released records for later records', async () => {
    const dir = logDir();
    const log = await DurableLog.open(dir);
    const round = async (tag: string) => {
      const seqs = await Promise.all(Array.from({ length: 2000 }, (_, i) => log.append(payload(`${tag}${i}`, 1000))));
      return seqs.at(-1)!;
    };
    await log.release(await round('a'));
    const sizeAfterFirst = fs.statSync(dataFile(dir)).size;
    expect(sizeAfterFirst).toBeGreaterThan(2000 * 1000);
    // later rounds reuse the pages released before them: without that, three rounds take three times the first.
    // LMDB hands a commit's freed pages out only a couple of commits later, so part of a round may still land in new
    // pages, more so when the machine is busy
    await log.release(await round('b'));
    await round('c');
    expect(fs.statSync(dataFile(dir)).size).toBeLessThan(sizeAfterFirst * 2.5);
    await log.close();
  });

  it('close waits for the appends in flight; afterwards appends are refused', async () => {
    const dir = logDir();
    const log = await DurableLog.open(dir);
    const appends = Array.from({ length: 300 }, (_, i) => log.append(payload(i)));
    await log.close();
    const outcomes = await Promise.allSettled(appends);
    expect(outcomes.every((outcome) => outcome.status === 'fulfilled')).toBe(true);
    await expect(log.append(payload('late'))).rejects.toBeInstanceOf(LogClosedError);

    const reopened = await DurableLog.open(dir);
    expect(reopened.stats().records).toBe(300);
    await reopened.close();
  });

  it('releases at open what the store already holds, and numbers above it even when the log was replaced', async () => {
    const dir = logDir();
    let log = await DurableLog.open(dir);
    const seqs = await Promise.all(Array.from({ length: 10 }, (_, i) => log.append(payload(i))));
    await log.close();

    log = await DurableLog.open(dir, { loadedThrough: seqs[5] });
    expect(log.read(0).map((record) => record.seq)).toEqual(seqs.slice(6));
    expect(log.stats()).toMatchObject({ records: 4, releasedThrough: seqs[5] });
    await log.close();

    const { logger, entries } = recordingLogger();
    const replaced = await DurableLog.open(logDir(), { loadedThrough: 1000, logger });
    expect(await replaced.append(payload('x'))).toBe(1001);
    expect(entries.map((entry) => entry.level)).toEqual(['warn']);
    await replaced.close();
  });

  it('skips a record whose bytes changed after it was written, and says which', async () => {
    const dir = logDir();
    const { logger, entries } = recordingLogger();
    const log = await DurableLog.open(dir, { logger });
    const seqs = await Promise.all([0, 1, 2].map((i) => log.append(payload(`rot${i}`))));
    const offsets = offsetsOf(dataFile(dir), '<Arot1Z>');
    expect(offsets.length).toBeGreaterThan(0);
    // the file is mapped read-only by LMDB: a change made through the file shows in the map
    for (const offset of offsets) flipByte(dataFile(dir), offset + 20);
    expect(log.read(0).map((record) => record.seq)).toEqual([seqs[0], seqs[2]]);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      level: 'error',
      details: { lostRecords: 1, firstSeq: seqs[1], lastSeq: seqs[1] },
    });
    await log.close();
  });
});

describe('record format', () => {
  it('finds any changed byte, and the checksum of older Node versions is zlib.crc32', () => {
    const stored = encodeRecord(Buffer.from('hello log'), 1234);
    expect(decodeRecord(stored)).toEqual({ appendedAt: 1234, payload: Buffer.from('hello log') });
    for (let i = 0; i < stored.length; i++) {
      const damaged = Buffer.from(stored);
      damaged[i]! ^= 0x10;
      expect(decodeRecord(damaged), `byte ${i} changed`).toBeNull();
    }
    expect(decodeRecord(stored.subarray(0, HEADER_BYTES - 1))).toBeNull();
    for (const text of ['', 'a', 'hello log', 'x'.repeat(1000)]) {
      expect(crc32ForTests(Buffer.from(text))).toBe(zlib.crc32(Buffer.from(text)));
    }
  });
});

describe('backlog accounting', () => {
  it('counts records across gaps and jumps in numbering, and releases exactly what is at or below the mark', () => {
    const backlog = new Backlog();
    const added = new Map<number, number>();
    const add = (seq: number, size: number) => (backlog.add(seq, size), added.set(seq, size));
    for (let seq = 1; seq <= 3000; seq++) if (seq % 7 !== 0) add(seq, seq % 50);
    add(10_000, 5); // a gap filled with empty slots
    add(5_000_000_000_000, 9); // a jump (a log numbered from the clock): a new run
    add(5_000_000_000_002, 11);
    const sum = (seqs: Iterable<number>) => [...seqs].reduce((total, seq) => total + added.get(seq)!, 0);
    expect(backlog.records).toBe(added.size);
    expect(backlog.bytes).toBe(sum(added.keys()));
    expect(backlog.firstSeq()).toBe(1);

    const first = backlog.releaseThrough(2000);
    expect(first).toEqual([...added.keys()].filter((seq) => seq <= 2000));
    expect(backlog.firstSeq()).toBe(2001);
    const second = backlog.releaseThrough(5_000_000_000_001);
    expect(second).toEqual([...added.keys()].filter((seq) => seq > 2000 && seq <= 5_000_000_000_001));
    expect(backlog.records).toBe(1);
    expect(backlog.bytes).toBe(11);
    expect(backlog.firstSeq()).toBe(5_000_000_000_002);
    expect(backlog.releaseThrough(5_000_000_000_002)).toEqual([5_000_000_000_002]);
    expect(backlog.firstSeq()).toBeNull();
    add(5_000_000_000_010, 1);
    expect(backlog.firstSeq()).toBe(5_000_000_000_010);
    expect(() => backlog.add(5_000_000_000_010, 1)).toThrow(/twice/);
  });
});

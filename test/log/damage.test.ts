// A damaged log file never stops the log from opening, and keeps every committed record it can still read.
// What LMDB guarantees, and so what each case may expect:
// - pages past the last committed one (a transaction that never committed its meta page) are never read: a torn
//   or truncated tail there loses nothing;
// - unused pages (free, or stale copies left by copy-on-write) are never read: damage there loses nothing;
// - LMDB keeps no checksums: a changed byte inside a committed record goes unnoticed by LMDB; the log's own CRC-32
//   finds it, and drops that record alone;
// - a file shorter than its committed pages would be read through the map and kill the process (SIGBUS): the log
//   notices first, and falls back to the previous transaction, which copy-on-write keeps intact;
// - meta pages LMDB rejects: the file is moved aside and a new log starts, numbering above anything before.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DurableLog } from '../../src/log/durable-log.ts';
import { readLosses } from '../../src/log/losses.ts';
import {
  dataFile,
  flipByte,
  logDir,
  offsetsOf,
  payload,
  randomInt,
  recordingLogger,
  removeTempDirs,
} from './log-helpers.ts';

afterAll(removeTempDirs);

const PAGE = 4096;

/** a log with `count` records appended in awaited groups (several transactions), then closed */
async function filledLog(count: number, size = 150): Promise<{ dir: string; seqs: number[] }> {
  const dir = logDir();
  const log = await DurableLog.open(dir);
  const seqs: number[] = [];
  for (let start = 0; start < count; start += 25) {
    const group = Array.from({ length: Math.min(25, count - start) }, (_, i) => log.append(payload(start + i, size)));
    seqs.push(...(await Promise.all(group)));
  }
  await log.close();
  return { dir, seqs };
}

function allRecords(log: DurableLog): { seq: number; value: string }[] {
  return log.read(0, { maxRecords: 1_000_000 }).map((record) => ({ seq: record.seq, value: record.value.toString() }));
}

function expected(seqs: number[], ids: number[], size = 150): { seq: number; value: string }[] {
  return ids.map((id) => ({ seq: seqs[id]!, value: payload(id, size).toString() }));
}

const range = (count: number) => Array.from({ length: count }, (_, i) => i);

/** the log still takes appends, and they survive another reopen */
async function stillWorks(dir: string, log: DurableLog, above: number): Promise<void> {
  const seq = await log.append(payload('after', 150));
  expect(seq).toBeGreaterThan(above);
  await log.close();
  const reopened = await DurableLog.open(dir);
  expect(allRecords(reopened).at(-1)).toEqual({ seq, value: payload('after', 150).toString() });
  await reopened.close();
}

describe('durable log with a damaged file', () => {
  it('loses nothing to a torn tail past the last committed page (garbage, cut at a random byte)', async () => {
    const { dir, seqs } = await filledLog(200);
    const committedSize = fs.statSync(dataFile(dir)).size;
    const garbage = randomInt(1, 3 * PAGE);
    fs.appendFileSync(dataFile(dir), Buffer.from(Array.from({ length: garbage }, () => randomInt(0, 255))));
    const cutAt = randomInt(committedSize, committedSize + garbage);
    fs.truncateSync(dataFile(dir), cutAt);

    const { logger, entries } = recordingLogger();
    const log = await DurableLog.open(dir, { logger });
    expect(allRecords(log), `garbage ${garbage} bytes, cut at ${cutAt} of ${committedSize}`).toEqual(
      expected(seqs, range(200)),
    );
    expect(entries).toEqual([]);
    await stillWorks(dir, log, seqs[199]!);
  });

  it('rolls back to the previous transaction when the file was cut inside the last committed page, and says so', async () => {
    const { dir, seqs } = await filledLog(200);
    // the last transaction holds one record of three pages: LMDB puts it at the end of the file
    let log = await DurableLog.open(dir);
    const lastSeq = await log.append(payload('big', 3 * PAGE));
    await log.close();
    const size = fs.statSync(dataFile(dir)).size;
    expect(offsetsOf(dataFile(dir), '<AbigZ>')[0]).toBeGreaterThan(size - 4 * PAGE);
    const cutAt = size - randomInt(1, PAGE - 1);
    fs.truncateSync(dataFile(dir), cutAt);

    const { logger, entries } = recordingLogger();
    log = await DurableLog.open(dir, { logger });
    expect(allRecords(log), `cut at ${cutAt} of ${size}`).toEqual(expected(seqs, range(200)));
    expect(entries.map((entry) => entry.level)).toEqual(['error']);
    expect(entries[0]!.message).toMatch(/rolled back/);
    // the one line counts what the latest transaction took with it, against what was acknowledged
    expect(entries[0]!.details).toMatchObject({ lostRecords: 1, lostEvents: 1, firstSeq: lastSeq, lastSeq });
    expect(log.openLoss).toMatchObject({ records: 1, events: 1, firstSeq: lastSeq, lastSeq });
    // the lost record's number is not handed out again
    await stillWorks(dir, log, lastSeq);
  });

  it('loses nothing when bytes change in unused pages (stale copies of released records)', async () => {
    const { dir, seqs } = await filledLog(400);
    let log = await DurableLog.open(dir);
    await log.release(seqs[299]!);
    await Promise.all(range(20).map((i) => log.append(payload(`new${i}`, 150))));
    const live = allRecords(log);
    await log.close();

    // every copy of a released record still in the file is in a free page or in free space inside a page
    const first = randomInt(0, 299);
    const released = range(300)
      .map((i) => (first + i) % 300)
      .find((id) => offsetsOf(dataFile(dir), `<A${id}Z>`).length > 0)!;
    const offsets = offsetsOf(dataFile(dir), `<A${released}Z>`);
    expect(offsets.length).toBeGreaterThan(0);
    for (const offset of offsets) flipByte(dataFile(dir), offset + randomInt(0, 100), 0xff);

    const { logger, entries } = recordingLogger();
    log = await DurableLog.open(dir, { logger });
    expect(allRecords(log), `record ${released}, ${offsets.length} stale copies changed`).toEqual(live);
    expect(entries).toEqual([]);
    await stillWorks(dir, log, live.at(-1)!.seq);
  });

  it('drops the one record whose bytes changed in the last-written page, keeps every other, and says which', async () => {
    const { dir, seqs } = await filledLog(200);
    const offsets = offsetsOf(dataFile(dir), '<A199Z>');
    expect(offsets.length).toBeGreaterThan(0);
    const at = randomInt(0, 149);
    for (const offset of offsets) flipByte(dataFile(dir), offset + at);

    const { logger, entries } = recordingLogger();
    const log = await DurableLog.open(dir, { logger });
    expect(allRecords(log), `byte ${at} of the last record changed`).toEqual(expected(seqs, range(199)));
    expect(log.stats().records).toBe(199);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      level: 'error',
      details: { lostRecords: 1, lostEvents: 1, firstSeq: seqs[199], lastSeq: seqs[199], cause: /checksum mismatch/ },
    });
    await stillWorks(dir, log, seqs[199]!);
  });

  it('moves a file LMDB rejects aside, starts a new log numbered above the old one, and says where the old file went', async () => {
    const { dir, seqs } = await filledLog(50);
    // LMDB's magic number in both meta pages
    const magic = Buffer.from([0xde, 0xc0, 0xef, 0xbe]);
    const metaMagic = offsetsOf(dataFile(dir), magic).filter((offset) => offset < 2 * PAGE);
    expect(metaMagic).toHaveLength(2);
    for (const offset of metaMagic) flipByte(dataFile(dir), offset, 0xff);
    const damagedBytes = fs.readFileSync(dataFile(dir));

    const { logger, entries } = recordingLogger();
    const log = await DurableLog.open(dir, { logger });
    expect(allRecords(log)).toEqual([]);
    expect(entries.map((entry) => entry.level)).toEqual(['error']);
    expect(entries[0]!.details).toMatchObject({
      lostRecords: 50,
      lostEvents: 50,
      firstSeq: seqs[0],
      lastSeq: seqs[49],
    });
    const movedTo = entries[0]!.details.movedTo as string;
    expect(path.dirname(movedTo)).toBe(dir);
    // it holds events: readable by the service's user alone, as the log's directory
    expect(fs.statSync(movedTo).mode & 0o777).toBe(0o700);
    expect(fs.readFileSync(path.join(movedTo, 'data.mdb')).equals(damagedBytes)).toBe(true);
    await stillWorks(dir, log, seqs[49]!);
  });

  it('counts a loss exactly against what was acknowledged, in events, when the file is cut to half', async () => {
    const dir = logDir();
    // each record's events are in its first byte, as the service's records name theirs
    const weightOf = (value: Buffer) => value[0]!;
    let log = await DurableLog.open(dir, { weightOf });
    const events = range(300).map((i) => (i % 7) + 1);
    const seqs: number[] = [];
    for (let start = 0; start < 300; start += 30)
      seqs.push(
        ...(await Promise.all(
          range(30).map((i) => log.append(Buffer.concat([Buffer.from([events[start + i]!]), payload(start + i, 150)]))),
        )),
      );
    // the store holds the first 100: released, never counted as lost
    await log.release(seqs[99]!);
    await log.close();
    fs.truncateSync(dataFile(dir), Math.floor(fs.statSync(dataFile(dir)).size / 2));

    const { logger, entries } = recordingLogger();
    log = await DurableLog.open(dir, { logger, weightOf, loadedThrough: seqs[99]! });
    const kept = new Set(allRecords(log).map((record) => record.seq));
    const lost = range(300).filter((i) => i >= 100 && !kept.has(seqs[i]!));
    const loss = { records: lost.length, events: lost.reduce((sum, i) => sum + events[i]!, 0) };
    expect(lost.length).toBeGreaterThan(0);
    expect(log.openLoss).toMatchObject({ ...loss, firstSeq: seqs[lost[0]!], lastSeq: seqs[lost.at(-1)!] });
    expect(entries.filter((entry) => entry.level === 'error')).toHaveLength(1);
    expect(entries.find((entry) => entry.level === 'error')!.details).toMatchObject({
      lostRecords: loss.records,
      lostEvents: loss.events,
    });
    console.log(`[half-truncated log] ${kept.size} of 200 records waiting still read; ${loss.events} events lost`);
    // counted once: the next open finds nothing more missing
    await log.close();
    log = await DurableLog.open(dir, { weightOf });
    expect(log.openLoss).toBeNull();
    await log.close();
  });

  it('counts acknowledged records missing from a file replaced by an older copy', async () => {
    const { dir, seqs } = await filledLog(100);
    const older = fs.readFileSync(dataFile(dir));
    let log = await DurableLog.open(dir);
    const newer = await Promise.all(range(10).map((i) => log.append(payload(`new${i}`, 150))));
    await log.close();
    fs.writeFileSync(dataFile(dir), older);

    const { logger, entries } = recordingLogger();
    log = await DurableLog.open(dir, { logger });
    expect(allRecords(log)).toEqual(expected(seqs, range(100)));
    expect(log.openLoss).toMatchObject({ records: 10, events: 10, firstSeq: newer[0], lastSeq: newer[9] });
    expect(entries.map((entry) => entry.level)).toEqual(['error']);
    await log.close();
  });

  it('counts a record found damaged while the log runs as a loss until acknowledged, in its events', async () => {
    const dir = logDir();
    const weightOf = (value: Buffer) => value[0]!;
    const { logger, entries } = recordingLogger();
    const log = await DurableLog.open(dir, { weightOf, logger });
    const seqs = await Promise.all(
      range(10).map((i) => log.append(Buffer.concat([Buffer.from([i + 1]), payload(`live${i}`, 150)]))),
    );
    // the bytes change under the running log (a failing disk): the map shows them
    for (const offset of offsetsOf(dataFile(dir), '<Alive4Z>')) flipByte(dataFile(dir), offset + 20);
    expect(log.read(0).map((record) => record.seq)).toEqual(seqs.filter((_, i) => i !== 4));
    expect(readLosses(dir)).toEqual([expect.objectContaining({ records: 1, events: 5, firstSeq: seqs[4] })]);
    expect(entries.filter((entry) => entry.level === 'error').map((entry) => entry.details)).toEqual([
      expect.objectContaining({ lostEvents: 5, firstSeq: seqs[4] }),
    ]);
    await log.close();
  });
});

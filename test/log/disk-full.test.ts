// The durable log on a filesystem that really fills up (a small tmpfs): appends fail with LogFullError, the log is not
// damaged, appends succeed again once space returns, and the free-space headroom stops the log before the disk is full.
// Mounting needs root; CI runs as root, elsewhere the suite skips when it cannot mount.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { DurableLog, LogFullError } from '../../src/log/durable-log.ts';
import { mountTmpfs } from '../helpers/tmpfs.ts';
import { payload, recordingLogger } from './log-helpers.ts';

const disk = mountTmpfs(4, 'tma-log-tmpfs-');
const mountPoint = disk?.dir ?? '';

afterAll(() => disk?.unmount());

describe.runIf(disk)('durable log on a full disk', () => {
  const dir = path.join(mountPoint, 'log');
  const filler = path.join(mountPoint, 'filler');
  // each test starts from an empty disk: no log records and no filler another test left behind
  beforeEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(filler, { force: true });
  });

  it('fails appends while the disk is full, without damage, and takes them again once space returns', async () => {
    const { logger, entries } = recordingLogger();
    // no headroom: the writes themselves meet the full disk
    let log = await DurableLog.open(dir, { minFreeBytes: 0, logger });
    const acknowledged = new Map<number, string>();
    const append = async (id: string) => acknowledged.set(await log.append(payload(id, 4000)), id);
    for (let i = 0; i < 20; i++) await append(`before${i}`);

    disk!.fill('filler');
    const outcomes = await Promise.allSettled(Array.from({ length: 40 }, (_, i) => append(`full${i}`)));
    const failures = outcomes
      .filter((outcome) => outcome.status === 'rejected')
      .map((outcome) => (outcome as PromiseRejectedResult).reason);
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(LogFullError);
      expect((failure as LogFullError).reason).toBe('disk-full');
    }

    fs.rmSync(filler);
    for (let i = 0; i < 20; i++) await append(`after${i}`);
    const expectedRecords = [...acknowledged].sort(([a], [b]) => a - b);
    const read = () => log.read(0, { maxRecords: 10_000 }).map((record) => [record.seq, record.value.toString()]);
    expect(read()).toEqual(expectedRecords.map(([seq, id]) => [seq, payload(id, 4000).toString()]));
    expect(log.stats().records).toBe(acknowledged.size);
    await log.close();

    log = await DurableLog.open(dir, { minFreeBytes: 0, logger });
    expect(read()).toEqual(expectedRecords.map(([seq, id]) => [seq, payload(id, 4000).toString()]));
    expect(entries).toEqual([]);
    await log.release(expectedRecords.at(-1)![0]);
    await log.close();
  });

  it('stops taking appends before the disk would keep less than the headroom', async () => {
    const headroom = 2 * 1024 ** 2;
    const log = await DurableLog.open(dir, { minFreeBytes: headroom });
    let refusal: unknown;
    for (let i = 0; i < 1000 && refusal === undefined; i++) {
      await log.append(payload(i, 4000)).catch((error: unknown) => (refusal = error));
    }
    expect(refusal).toBeInstanceOf(LogFullError);
    expect((refusal as LogFullError).reason).toBe('disk-headroom');
    expect(disk!.free()).toBeGreaterThanOrEqual(headroom - 64 * 1024);
    expect(log.stats().records).toBeGreaterThan(0);
    await log.close();
  });

  it('keeps free, on top of the headroom, what another writer on the same disk still needs', async () => {
    const headroom = 512 * 1024;
    const reserve = 1536 * 1024;
    const log = await DurableLog.open(dir, { minFreeBytes: headroom, reserveBytes: () => reserve });
    try {
      let refusal: unknown;
      for (let i = 0; i < 1000 && refusal === undefined; i++) {
        await log.append(payload(i, 4000)).catch((error: unknown) => (refusal = error));
      }
      expect(refusal).toBeInstanceOf(LogFullError);
      expect(disk!.free()).toBeGreaterThanOrEqual(headroom + reserve - 64 * 1024);
      expect(log.refusal(4000)).toBeInstanceOf(LogFullError);
    } finally {
      await log.close();
    }
  });
});

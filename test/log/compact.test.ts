// The durable log's compaction: released records leave no bytes in the log's file (LMDB frees their pages without
// clearing them), the records waiting stay readable in order, and appends made during it wait and are kept.
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { DurableLog } from '../../src/log/durable-log.ts';
import { dataFile, logDir, removeTempDirs } from './log-helpers.ts';

afterAll(removeTempDirs);

const released = (i: number) => Buffer.from(`released record ${i} of user SECRET-USER-KEY ${'x'.repeat(300)}`);
const waiting = (i: number) => Buffer.from(`waiting record ${i}`);

describe('durable log compaction', () => {
  it("leaves no released record's bytes in the file and keeps the records waiting, in order, across a restart", async () => {
    const dir = logDir();
    const log = await DurableLog.open(dir);
    const seqs: number[] = [];
    // released one by one, as a loader does: freed pages are kept for reuse with the records' bytes in them
    for (let i = 0; i < 40; i++) {
      seqs.push(await log.append(released(i)));
      if (i % 8 === 7) await log.release(seqs.at(-1)!);
    }
    await log.release(seqs.at(-1)!);
    const kept = [await log.append(waiting(0)), await log.append(waiting(1))];
    expect(fs.readFileSync(dataFile(dir)).includes('SECRET-USER-KEY')).toBe(true);

    const compacting = log.compact();
    const during = log.append(waiting(2));
    await compacting;
    kept.push(await during);
    expect(fs.readFileSync(dataFile(dir)).includes('SECRET-USER-KEY')).toBe(false);
    // no copy left behind: the file, its lock and the acknowledgement ledger (numbers only)
    expect(fs.readdirSync(dir).sort()).toEqual(['acknowledged', 'data.mdb', 'lock.mdb']);
    expect(log.read(0).map((record) => [record.seq, record.value.toString()])).toEqual(
      kept.map((seq, i) => [seq, waiting(i).toString()]),
    );
    await log.release(kept[0]!);
    await log.close();

    const reopened = await DurableLog.open(dir);
    expect(reopened.read(0).map((record) => record.value.toString())).toEqual([waiting(1), waiting(2)].map(String));
    expect(reopened.stats()).toMatchObject({ records: 2, releasedThrough: kept[0] });
    expect(await reopened.append(waiting(3))).toBe(kept[2]! + 1);
    await reopened.close();
  });
});

// The acknowledgement ledger beside the durable log: it names every record written to it, also when its rewrite (a
// backlog that never empties) fails, and it is not rewritten again at every release while a large backlog waits.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AckLedger, LEDGER_FILE, readLedger } from '../../src/log/ack-ledger.ts';
import { logDir, removeTempDirs } from './log-helpers.ts';

afterAll(removeTempDirs);

/** records past the size at which the ledger is rewritten without released entries */
const LARGE = 800_000;

describe('acknowledgement ledger', () => {
  it('keeps naming new records when its rewrite fails, and rewrites a large backlog only as it doubles', async () => {
    const dir = logDir();
    fs.mkdirSync(dir, { recursive: true });
    const ledger = AckLedger.start(dir, []);
    for (let seq = 1; seq <= LARGE; seq++) ledger.record(seq, 1);
    // the rewrite cannot write its new file: the old one stays in use
    fs.mkdirSync(path.join(dir, `${LEDGER_FILE}.new`));
    ledger.released(10, false);
    ledger.record(LARGE + 1, 3);
    expect(readLedger(dir)!.get(LARGE + 1)).toBe(3);
    expect(readLedger(dir)!.size).toBe(LARGE + 1);

    // once it can, the released entries go; a release soon after does not rewrite what is left again
    fs.rmdirSync(path.join(dir, `${LEDGER_FILE}.new`));
    ledger.released(20, false);
    expect(readLedger(dir)!.size).toBe(LARGE + 1 - 20);
    ledger.record(LARGE + 2, 1);
    const before = fs.statSync(path.join(dir, LEDGER_FILE)).ino;
    ledger.released(30, false);
    expect(fs.statSync(path.join(dir, LEDGER_FILE)).ino).toBe(before);
    expect(readLedger(dir)!.get(LARGE + 2)).toBe(1);
    // nothing waits: the ledger is emptied
    ledger.released(LARGE + 2, true);
    expect(readLedger(dir)!.size).toBe(0);
    ledger.close();
  });
});

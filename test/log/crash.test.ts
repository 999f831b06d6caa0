// kill -9 under load: a child process appends from 64 loops and releases what it read, like the loader will; it is
// killed at a random moment, three times on the same log. After each kill the log opens without complaint, every
// acknowledged record above the release watermark is there with its bytes, in order, nothing released comes back,
// and numbering continues above every number handed out.
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { DurableLog } from '../../src/log/durable-log.ts';
import { PROJECT_ROOT, childEnv } from '../helpers/service-process.ts';
import type { ChildConfig } from './fixtures/log-child.ts';
import { logDir, payload, randomInt, recordingLogger, removeTempDirs } from './log-helpers.ts';

afterAll(removeTempDirs);

const SIZE = 200;

interface KilledRun {
  /** acknowledged: seq → record id */
  acks: Map<number, string>;
  /** the highest release the child saw resolve */
  released: number;
  killedAfter: { acks: number; delayMs: number };
}

/** runs the child until it acknowledged at least minAcks and released once, then SIGKILLs it a random moment later */
async function runAndKill(config: ChildConfig, minAcks: number): Promise<KilledRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/log/fixtures/log-child.ts', JSON.stringify(config)], {
    cwd: PROJECT_ROOT,
    env: childEnv({}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let acks = 0;
  let releases = 0;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      stdout += text;
      acks += text.split('\nACK ').length - 1;
      releases += text.split('\nREL ').length - 1;
      if (acks >= minAcks && releases > 0) resolve();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    void exited.then(() => reject(new Error(`the child ended before it was killed: ${stderr}`)));
  });
  const timeout = setTimeout(() => child.kill('SIGKILL'), 60_000);
  await ready;
  const delayMs = randomInt(0, 300);
  await sleep(delayMs);
  child.kill('SIGKILL');
  await exited;
  clearTimeout(timeout);

  const result: KilledRun = { acks: new Map(), released: 0, killedAfter: { acks, delayMs } };
  // only whole lines: the kill may cut the last one
  for (const line of stdout.slice(0, stdout.lastIndexOf('\n')).split('\n')) {
    const [word, first, second] = line.split(' ');
    if (word === 'ACK') result.acks.set(Number(second), first!);
    else if (word === 'REL') result.released = Math.max(result.released, Number(first));
    else if (word === 'RELFAIL') throw new Error(`a release failed in the child: ${line}`);
  }
  return result;
}

describe('durable log killed with SIGKILL under load', () => {
  it('keeps every acknowledged record above the release watermark, in order, and numbers on after every kill', async () => {
    const dir = logDir();
    let highestAcknowledged = 0;
    for (let round = 1; round <= 3; round++) {
      const run = await runAndKill(
        { dir, appenders: 64, perAppender: 0, size: SIZE, releaseEveryMs: 20, idPrefix: `r${round}.` },
        1500,
      );
      const where = `round ${round}, killed ${run.killedAfter.delayMs} ms after ${run.killedAfter.acks} acknowledgements`;
      expect(run.acks.size, where).toBeGreaterThanOrEqual(1500);
      const newest = Math.max(...run.acks.keys());
      expect(Math.min(...run.acks.keys()), `${where}: numbering continued after the previous run`).toBeGreaterThan(
        highestAcknowledged,
      );
      highestAcknowledged = newest;

      const { logger, entries } = recordingLogger();
      const log = await DurableLog.open(dir, { logger });
      expect(entries, where).toEqual([]);
      const stats = log.stats();
      expect(stats.releasedThrough, where).toBeGreaterThanOrEqual(run.released);
      expect(stats.lastSeq, where).toBeGreaterThanOrEqual(newest);

      const records = log.read(0, { maxRecords: 1_000_000 });
      const seqs = records.map((record) => record.seq);
      expect(seqs, where).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size, where).toBe(seqs.length);
      expect(seqs[0] ?? Infinity, `${where}: nothing released comes back`).toBeGreaterThan(stats.releasedThrough);
      const present = new Map(records.map((record) => [record.seq, record.value.toString()]));
      const missing = [...run.acks]
        .filter(([seq, id]) => seq > stats.releasedThrough && present.get(seq) !== payload(id, SIZE).toString())
        .map(([seq]) => seq);
      expect(missing, `${where}: acknowledged records missing or changed`).toEqual([]);
      expect(stats.records, where).toBe(records.length);
      expect(stats.bytes, where).toBe(records.reduce((sum, record) => sum + record.value.length, 0));

      expect(await log.append(payload(`check${round}`, SIZE)), where).toBeGreaterThan(newest);
      await log.close();
    }
  });
});

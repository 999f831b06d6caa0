// The built service started on a DATA_DIR whose durable log LMDB cannot read: it starts all the same (on a new log,
// the old file kept aside), says so in its log, keeps what the store holds and takes events again.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { embeddedDataDir } from '../helpers/stores.ts';
import { killAllChildren, logDrained, runCliJson, startServiceProcess } from '../helpers/service-process.ts';
import { flipByte, offsetsOf } from './log-helpers.ts';

const APP = 'damaged_log_app';
const PAGE = 4096;
const dirs: string[] = [];
afterAll(async () => {
  await killAllChildren();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('a service whose durable log is damaged', () => {
  it('starts on a new log, keeps the damaged file aside, says so, and keeps every stored event', async () => {
    const dataDir = await embeddedDataDir('tma-damaged-log-');
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn' };
    const first = await startServiceProcess(env);
    const { token } = await runCliJson<{ token: string }>(env, [
      'tokens',
      'create',
      '--bot',
      '@damaged_log_bot',
      '--domain',
      'app.example.com',
      '--app-name',
      APP,
    ]);
    const sent = await postEvents(first.url, [makeEvent(APP), makeEvent(APP), makeEvent(APP)], { token });
    expect(sent.status).toBe(201);
    expect(await logDrained(first)).toBe(true);
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    // LMDB's magic number in both meta pages: no state of the file can be read
    const logFile = path.join(dataDir, 'log', 'data.mdb');
    const metaMagic = offsetsOf(logFile, Buffer.from([0xde, 0xc0, 0xef, 0xbe])).filter((at) => at < 2 * PAGE);
    expect(metaMagic).toHaveLength(2);
    for (const offset of metaMagic) flipByte(logFile, offset, 0xff);

    const second = await startServiceProcess(env);
    const aside = fs.readdirSync(path.join(dataDir, 'log')).filter((name) => name.startsWith('damaged-'));
    expect(aside, second.output()).toHaveLength(1);
    expect(second.output()).toMatch(
      /durable log: the log file is damaged beyond what LMDB can read; it was moved aside/,
    );
    const again = await postEvents(second.url, [makeEvent(APP)], { token });
    expect(again.status).toBe(201);
    expect(await logDrained(second)).toBe(true);
    const shown = await runCliJson<{ events_total: number }>(env, ['apps', 'show', '--app-name', APP]);
    expect(shown.events_total).toBe(4);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });
});

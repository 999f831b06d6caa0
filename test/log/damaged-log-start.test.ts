// The built service started on a DATA_DIR whose durable log LMDB cannot read: it starts all the same (on a new log,
// the old file kept aside), says so in its log, keeps what the store holds and takes events again. A log cut to half
// after kill -9 loses the events the store did not hold yet: counted exactly against what was acknowledged, in one
// error line, /healthz and the metrics until an operator acknowledges it, and told to the administrators by the bot.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTelegramEmulator, type TelegramServer } from '../helpers/telegram-emulator.ts';
import { embeddedDataDir } from '../helpers/stores.ts';
import { killAllChildren, logDrained, runCliJson, startServiceProcess } from '../helpers/service-process.ts';
import { flipByte, offsetsOf } from './log-helpers.ts';

const APP = 'damaged_log_app';
const PAGE = 4096;
const dirs: string[] = [];
let telegram: TelegramServer | undefined;
afterAll(async () => {
  await killAllChildren();
  await telegram?.stop();
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

  it('counts the events a log cut to half after kill -9 lost, says so until acknowledged, and tells the administrators', async () => {
    const dataDir = await embeddedDataDir('tma-lost-log-');
    dirs.push(dataDir);
    telegram = await startTelegramEmulator();
    const BOT_TOKEN = '700000077:lost-log-token';
    const ADMIN = 515151;
    const admin = telegram.getClient(BOT_TOKEN, { userId: ADMIN, chatId: ADMIN, type: 'private', firstName: 'Ada' });
    const env = {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      BOT_TOKEN,
      TELEGRAM_API_ROOT: telegram.config.apiURL,
      ADMIN_TELEGRAM_IDS: String(ADMIN),
    };
    const { token } = await runCliJson<{ token: string }>({ DATA_DIR: dataDir }, [
      'tokens',
      'create',
      '--bot',
      '@lost_log_bot',
      '--domain',
      'app.example.com',
      '--app-name',
      APP,
    ]);
    const first = await startServiceProcess(env);
    // the administrator has a chat with the bot
    await admin.sendCommand(admin.makeCommand('/start'));
    // requests acknowledged one after another, then the process killed before the loader stores them all
    let acknowledged = 0;
    for (let request = 0; request < 40; request++) {
      const events = Array.from({ length: 1 + (request % 5) }, () => makeEvent(APP));
      const answer = await postEvents(first.url, events, { token });
      expect(answer.status).toBe(201);
      acknowledged += events.length;
    }
    expect((await first.kill()).signal).toBe('SIGKILL');
    const logFile = path.join(dataDir, 'log', 'data.mdb');
    fs.truncateSync(logFile, Math.floor(fs.statSync(logFile).size / 2));

    const second = await startServiceProcess(env);
    expect(await logDrained(second)).toBe(true);
    const { events_total: stored } = await runCliJson<{ events_total: number }>(env, [
      'apps',
      'show',
      '--app-name',
      APP,
    ]);
    const lost = acknowledged - stored;
    expect(lost, second.output()).toBeGreaterThan(0);
    // one error line with the count, the range, the cause and where the file went
    const line = second
      .output()
      .split('\n')
      .filter((text) => text.includes('acknowledged events in'))
      .map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(line).toHaveLength(1);
    expect(line[0]).toMatchObject({ level: 50, lostEvents: lost, cause: expect.any(String) });
    expect(line[0]!.firstSeq).toBeLessThanOrEqual(line[0]!.lastSeq as number);
    expect(fs.existsSync(path.join(line[0]!.movedTo as string, 'data.mdb'))).toBe(true);
    // /healthz says so (still serving) and the metric counts it
    const health = async () => (await fetch(`${second.url}/healthz`)).json() as Promise<Record<string, unknown>>;
    expect(await health()).toMatchObject({ status: 'events lost', lost: { events: lost } });
    const metric = async () =>
      Number(/^tma_log_lost_events (\d+)$/m.exec(await (await fetch(`${second.url}/metrics`)).text())![1]);
    expect(await metric()).toBe(lost);
    expect((await postEvents(second.url, [makeEvent(APP)], { token })).status).toBe(201);
    // the administrator is told in their chat with the bot
    await expect
      .poll(() =>
        telegram!.storage.botMessages
          .filter((update) => String(update.message.chat_id) === String(ADMIN))
          .map((update) => String(update.message.text))
          .find((text) => text.includes('durable log')),
      )
      .toContain(`${lost} acknowledged events`);
    // the operator lists and acknowledges it; /healthz is "ok" again
    const listed = await runCliJson<{ losses: { events: number }[] }>(env, ['log', 'losses']);
    expect(listed.losses.map((loss) => loss.events)).toEqual([lost]);
    await runCliJson(env, ['log', 'acknowledge']);
    expect(await health()).toMatchObject({ status: 'ok' });
    expect((await health()).lost).toBeUndefined();
    expect(await metric()).toBe(0);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
  });
});

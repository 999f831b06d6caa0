// SIGTERM under load: requests the service has already read are finished with one of the spec's answers
// (201, or 400 "Failed to record"), never another status; new connections are refused; every 201 is stored.
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { APP_ORIGIN, BatchFactory, FAILED, runLoad, sendBody, SUCCESS, tallyAnswers } from '../helpers/load.ts';
import { embeddedDataDir } from '../helpers/stores.ts';
import { killAllChildren, runCliJson, startServiceProcess } from '../helpers/service-process.ts';

const APP = 'term_app';
const CLIENT_LOOPS = 16;
const LOAD_MS = 1_000;

const dirs: string[] = [];
afterAll(async () => {
  await killAllChildren();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('SIGTERM under load', () => {
  it('answers what it has read with 201 or "Failed to record", refuses new connections, and keeps every 201', async () => {
    const dataDir = await embeddedDataDir('tma-sigterm-');
    dirs.push(dataDir);
    const env = { DATA_DIR: dataDir, RATE_LIMIT_MAX: '1000000', LOG_LEVEL: 'warn' };
    const first = await startServiceProcess(env);
    const { token } = await runCliJson<{ token: string }>(env, [
      'tokens',
      'create',
      '--bot',
      '@term_test_bot',
      '--domain',
      'app.example.com',
      '--app-name',
      APP,
    ]);

    const factory = new BatchFactory(APP, { seed: 15, minEvents: 1, maxEvents: 20 });
    let stopAt = Infinity;
    // the clients keep sending (on their kept-alive connections) until well after the signal
    const load = runLoad({
      concurrency: CLIENT_LOOPS,
      keepGoing: () => performance.now() < stopAt,
      next: () => factory.next(),
      send: (batch) => sendBody(first.url, batch.body, { token, origin: APP_ORIGIN, timeoutMs: 10_000 }),
    });
    await sleep(LOAD_MS);
    const signalledAt = performance.now();
    stopAt = signalledAt + 1_000;
    const exit = await first.stop();
    const outcomes = await load;
    expect(exit, first.output()).toEqual({ code: 0, signal: null });

    const answered = outcomes.filter((outcome) => outcome.status !== null);
    const outsideSpec = answered.filter(
      (outcome) =>
        !(outcome.status === 201 && outcome.text === SUCCESS) && !(outcome.status === 400 && outcome.text === FAILED),
    );
    expect(tallyAnswers(outsideSpec), 'answers that are neither 201 nor "Failed to record"').toBe('');
    const afterSignal = outcomes.filter((outcome) => outcome.startedAt >= signalledAt);
    expect(
      afterSignal.filter((outcome) => outcome.status === null).length,
      'new connections after the signal are refused',
    ).toBeGreaterThan(0);

    const acknowledgedEvents = answered
      .filter((outcome) => outcome.status === 201)
      .reduce((sum, outcome) => sum + outcome.batch.seqs.length, 0);
    expect(acknowledgedEvents).toBeGreaterThan(0);
    const second = await startServiceProcess(env);
    const shown = await runCliJson<{ events_total: number }>(env, ['apps', 'show', '--app-name', APP]);
    expect(await second.stop()).toEqual({ code: 0, signal: null });
    // what was committed while its answer was still being written counts too, but nothing is lost
    expect(shown.events_total).toBeGreaterThanOrEqual(acknowledgedEvents);
    expect(shown.events_total).toBeLessThanOrEqual(factory.seqCount);
  });
});

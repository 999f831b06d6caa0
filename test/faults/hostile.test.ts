// Abuse: a generated corpus of more than 10,000 hostile requests (invalid JSON, deep nesting, 10 MB
// bodies, gzip/deflate/brotli bombs, wrong content types, huge strings, NUL and lone surrogates,
// __proto__ keys, trickled and abandoned bodies, header and protocol abuse) against the real service
// process (the build, `node dist/server/main.js`, embedded store). Every answer is a clean 4xx (or 201 for the
// valid-but-odd requests), never a 5xx or a hang; the process stays up, keeps serving meanwhile, and its
// resident memory (VmRSS from /proc) stays bounded.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APP_ORIGIN } from '../helpers/load.ts';
import { embeddedDataDir } from '../helpers/stores.ts';
import {
  killAllChildren,
  rssBytes,
  runCliJson,
  startServiceProcess,
  type ServiceProcess,
} from '../helpers/service-process.ts';
import { buildCorpus, type HostileCase } from './hostile-corpus.ts';
import { sendRaw, sendRawRetrying, type RawAnswer } from './raw-client.ts';

const APP = 'hostile_app';
const CORPUS_SIZE = 10_000;
/** the service's default MAX_BODY_BYTES */
const MAX_BODY_BYTES = 1_048_576;
const CONCURRENCY = 24;
/** slow-header connections held open while the corpus runs (slowloris) */
const SLOW_CONNECTIONS = 100;
/** a health check that gets no answer within this failed (a hang guard for a loaded machine, not a speed check) */
const HEALTH_DEADLINE_MS = 60_000;
/**
 * growth of the service's VmRSS over its size after warm-up: the heap grows to what the requests in flight hold at
 * once (ten-megabyte bodies among them), which is more while the rest of the suite shares the two cores; a leak over
 * the corpus's 10,000 requests would pass it by far
 */
const RSS_GROWTH_LIMIT = 320 * 1024 * 1024;

const MiB = (bytes: number) => Math.round(bytes / 1048576);

describe.runIf(process.platform === 'linux')('hostile requests against the service process', () => {
  let service: ServiceProcess;
  let token: string;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await embeddedDataDir('tma-hostile-');
    const env = { DATA_DIR: dataDir, RATE_LIMIT_MAX: '1000000000', LOG_LEVEL: 'error' };
    service = await startServiceProcess(env);
    const created = await runCliJson<{ token: string }>(env, [
      'tokens',
      'create',
      '--bot',
      '@hostile_bot',
      '--domain',
      'app.example.com',
      '--app-name',
      APP,
    ]);
    token = created.token;
  });

  afterAll(async () => {
    await killAllChildren();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it(`answers ${CORPUS_SIZE}+ hostile requests with clean 4xx (201 for the valid-but-odd), stays up, memory bounded`, async () => {
    const corpus = buildCorpus({ appName: APP, token, origin: APP_ORIGIN, size: CORPUS_SIZE });
    expect(corpus.length).toBeGreaterThanOrEqual(CORPUS_SIZE);

    // warm-up: the valid requests of another corpus (the largest legitimate ones included), from as many
    // clients: the embedded database's WebAssembly memory grows to the largest commit it has run and never
    // shrinks, so the baseline is the service at its working size; then the memory baseline
    const warmUp = buildCorpus({ appName: APP, token, origin: APP_ORIGIN, size: CORPUS_SIZE, seed: 1 }).filter(
      (c) => !c.trickle && c.expect.length === 1 && c.expect[0] === 201,
    );
    const warmUpAnswers: (number | null)[] = [];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let c = warmUp.pop(); c; c = warmUp.pop()) warmUpAnswers.push((await sendRaw(service.port, c)).status);
      }),
    );
    expect(warmUpAnswers.filter((status) => status !== 201)).toEqual([]);
    const rssStart = rssBytes(service.pid);
    let rssMax = rssStart;
    const sampler = setInterval(() => {
      try {
        rssMax = Math.max(rssMax, rssBytes(service.pid));
      } catch {
        // the process is gone: the checks below say so
      }
    }, 100);

    // slowloris: connections that send a header byte now and then, never finishing, held during the run
    const slow: net.Socket[] = [];
    let slowClosedByServer = 0;
    let slowDone = false;
    for (let i = 0; i < SLOW_CONNECTIONS; i++) {
      const socket = net.connect({ host: '127.0.0.1', port: service.port });
      socket.on('error', () => undefined);
      socket.on('close', () => !slowDone && slowClosedByServer++);
      socket.write('POST /events HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
      slow.push(socket);
    }
    const drip = setInterval(() => slow.forEach((socket) => socket.writable && socket.write('a')), 500);

    // while all of that runs, a normal client must keep being served promptly
    const healthTimes: number[] = [];
    let running = true;
    const health = (async () => {
      while (running) {
        const started = performance.now();
        const response = await fetch(`${service.url}/healthz`, {
          signal: AbortSignal.timeout(HEALTH_DEADLINE_MS),
        }).catch(() => null);
        await response?.arrayBuffer();
        healthTimes.push(response?.status === 200 ? performance.now() - started : Infinity);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();

    const answers = new Array<RawAnswer>(corpus.length);
    let next = 0;
    let retried = 0;
    const started = performance.now();
    // slow cases first so their seconds overlap the bulk
    const order = [...corpus.filter((c) => c.trickle), ...corpus.filter((c) => !c.trickle)];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < order.length) {
          const c = order[next++]!;
          const answer = await sendRawRetrying(service.port, c, MAX_BODY_BYTES);
          if (answer.attempts > 1) retried++;
          answers[c.id] = answer;
        }
      }),
    );
    const elapsed = performance.now() - started;
    running = false;
    await health;
    clearInterval(drip);
    clearInterval(sampler);
    slowDone = true;
    slow.forEach((socket) => socket.destroy());

    // every answer is one the case allows; never a 5xx, never a hang
    const wrong: string[] = [];
    const tally = new Map<string, number>();
    for (const c of corpus) {
      const answer = answers[c.id]!;
      const key = `${c.category} → ${answer.status ?? answer.error}`;
      tally.set(key, (tally.get(key) ?? 0) + 1);
      const problem = check(c, answer);
      if (problem && wrong.length < 25) wrong.push(`#${c.id} ${c.category}: ${c.label}: ${problem}`);
    }
    const summary = [...tally]
      .sort()
      .map(([key, count]) => `${count} × ${key}`)
      .join('\n');
    expect(wrong, `unexpected answers (first 25):\n${wrong.join('\n')}\n\nall answers:\n${summary}`).toEqual([]);
    const statuses = corpus.map((c) => answers[c.id]!.status);
    expect(statuses.filter((status) => status !== null && status >= 500)).toEqual([]);
    // the store never failed here, so no request may have ended in the catch-all answer, and nothing in the
    // service was an unexpected error (those become 400 "Failed to record" on /events)
    const failedToRecord = corpus
      .filter((c) => answers[c.id]!.body.includes('Failed to record'))
      .map((c) => `#${c.id} ${c.label}`);
    expect(failedToRecord.slice(0, 20), `${failedToRecord.length} answered "Failed to record"`).toEqual([]);
    expect(
      service
        .output()
        .match(/.*unexpected error.*/g)
        ?.slice(0, 5) ?? [],
    ).toEqual([]);

    // the process is up and still does its job
    expect(service.running()).toBe(true);
    const after = await fetch(`${service.url}/healthz`);
    expect(after.status).toBe(200);
    await after.arrayBuffer();
    const valid = await sendRaw(service.port, validCase(token, -1));
    expect(valid.status, valid.body).toBe(201);

    // served meanwhile: every health check was answered 200 (how soon is printed below)
    const slowestHealth = Math.max(...healthTimes);
    expect(
      healthTimes.filter((ms) => !Number.isFinite(ms)).length,
      `health checks unanswered or not 200 during the run (ms): ${healthTimes.map(Math.round).join(', ')}`,
    ).toBe(0);

    // memory stayed bounded
    expect(
      rssMax - rssStart,
      `VmRSS ${MiB(rssStart)} MiB after warm-up, max ${MiB(rssMax)} MiB during the corpus`,
    ).toBeLessThan(RSS_GROWTH_LIMIT);

    console.info(
      `[hostile] ${corpus.length} requests in ${Math.round(elapsed)} ms (${CONCURRENCY} clients, ${SLOW_CONNECTIONS} slowloris connections, ` +
        `${retried} oversized bodies sent again after their 413 was lost to a reset, ` +
        `${slowClosedByServer} closed by the server); VmRSS ${MiB(rssStart)} → max ${MiB(rssMax)} MiB; ` +
        `slowest health check ${Math.round(slowestHealth)} ms; answers: ${summary.split('\n').join('; ')}`,
    );
  });
});

function validCase(token: string, n: number): HostileCase {
  const event = {
    event_name: 'app-init',
    session_id: crypto.randomUUID(),
    user_id: 279058397,
    app_name: APP,
    platform: 'tdesktop',
    client_timestamp: String(Date.now()),
    custom_data: { warm: n },
  };
  return {
    id: -1,
    category: 'valid',
    label: 'a valid event',
    method: 'POST',
    path: '/events',
    headers: [
      ['Content-Type', 'application/json'],
      ['TGA-Auth-Token', token],
      ['Origin', APP_ORIGIN],
    ],
    body: Buffer.from(JSON.stringify(event)),
    expect: [201],
    jsonMessage: true,
  };
}

/** null when the answer is acceptable for the case, else what is wrong with it */
function check(c: HostileCase, answer: RawAnswer): string | null {
  if (c.expect.length === 0) {
    // the client left early: no answer, or a refusal
    return answer.status === null || (answer.status >= 400 && answer.status < 500)
      ? null
      : `answered ${answer.status} to an abandoned request`;
  }
  if (answer.status === null) return `no answer (${answer.error}) after ${Math.round(answer.ms)} ms`;
  if (!c.expect.includes(answer.status))
    return `answered ${answer.status} ${answer.body.slice(0, 200)}, expected ${c.expect.join(' or ')}`;
  if (c.jsonMessage) {
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return `answer is not JSON: ${answer.body.slice(0, 200)}`;
    }
    if (typeof (body as { message?: unknown })?.message !== 'string')
      return `answer has no message: ${answer.body.slice(0, 200)}`;
    const origin = c.headers.find(([name]) => name.toLowerCase() === 'origin')?.[1];
    if (
      origin &&
      /^\/events(\/|\?|$)/.test(c.path) &&
      c.method === 'POST' &&
      !answer.headers['access-control-allow-origin']
    ) {
      return `answer ${answer.status} without CORS headers (a browser would hide it from the client)`;
    }
  }
  return null;
}

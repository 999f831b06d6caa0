// The bench's load generator on a machine without wrk (autocannon): every body sent in turn, refusals
// counted, a fixed rate kept.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeBodyFile } from '../../bench/lib/bodies.ts';
import { loadGeneratorName, runLoad } from '../../bench/lib/loadgen.ts';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-loadgen-'));
const bodies = ['{"n":1}', '{"n":2}', '{"n":3,"refuse":true}'].map((text) => Buffer.from(text));
/** requests the server received, by the body's n */
const received = new Map<number, number>();
let server: FastifyInstance;
let url: string;
let loadGeneratorBefore: string | undefined;

beforeAll(async () => {
  loadGeneratorBefore = process.env.BENCH_LOADGEN;
  process.env.BENCH_LOADGEN = 'autocannon';
  server = Fastify();
  server.post('/events', async (request, reply) => {
    const body = request.body as { n: number; refuse?: boolean };
    received.set(body.n, (received.get(body.n) ?? 0) + 1);
    reply.code(body.refuse ? 400 : 201);
    return { message: 'ok' };
  });
  url = `${await server.listen({ port: 0, host: '127.0.0.1' })}/events`;
});

afterAll(async () => {
  if (loadGeneratorBefore === undefined) delete process.env.BENCH_LOADGEN;
  else process.env.BENCH_LOADGEN = loadGeneratorBefore;
  await server.close();
  fs.rmSync(work, { recursive: true, force: true });
});

describe('bench load generator without wrk', () => {
  it('sends the bodies in turn at the asked rate and counts the refused answers', async () => {
    expect(loadGeneratorName()).toBe('autocannon');
    const { file } = writeBodyFile(path.join(work, 'bodies.bin'), bodies);
    const result = await runLoad({
      url,
      headers: { 'content-type': 'application/json' },
      bodyFile: file,
      connections: 2,
      durationSec: 2,
      rate: 150,
    });

    expect(result.tool).toBe('autocannon');
    // 150 req/s for 2 s, paced: never faster than the rate over the seconds the run really took (autocannon sends a
    // second's requests at once, and may start one more second before it stops, with one more request per
    // connection already under way; on a loaded machine its stop timer fires late), and not stalled (a loaded
    // machine may fall well short of the rate)
    expect(result.requests).toBeGreaterThanOrEqual(100);
    expect(result.requests).toBeLessThanOrEqual(150 * (Math.ceil(result.durationSec) + 1) + 2);
    expect(result.transportErrors).toBe(0);
    // every body went out, in turn: one in three is the refused one, and the list was restarted; the
    // server may also have received the last request of each connection, cut off when the run ended
    const counts = [1, 2, 3].map((n) => received.get(n) ?? 0);
    const total = counts.reduce((sum, count) => sum + count, 0);
    expect(total - result.requests).toBeGreaterThanOrEqual(0);
    expect(total - result.requests).toBeLessThanOrEqual(2);
    for (const count of counts) expect(Math.abs(count - total / 3)).toBeLessThanOrEqual(2);
    expect(counts[2]! - result.errorStatus).toBeGreaterThanOrEqual(0);
    expect(counts[2]! - result.errorStatus).toBeLessThanOrEqual(2);
    expect(result.bodyWraps).toBeGreaterThan(30);
    expect(result.p99Ms).toBeGreaterThanOrEqual(result.p50Ms);
  });
});

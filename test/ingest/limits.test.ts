// Size limits and hostile bodies get clear 4xx answers and the service stays up.
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
let token: string;

beforeAll(async () => {
  service = await startTestService({ RATE_LIMIT_MAX: '100000' });
  token = await service.createApp('limits_app');
});
afterAll(() => service?.close());

async function send(body: string | Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}) {
  const response = await fetch(`${service.url}/events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      origin: 'https://app.example.com',
      'ANALYTICS-Auth-Token': token,
      ...headers,
    },
    body,
  });
  return {
    status: response.status,
    json: (await response.json()) as Record<string, unknown>,
    cors: response.headers.get('access-control-allow-origin'),
  };
}

const TOO_LARGE = 'Request body is too large: at most 1048576 bytes (after decompression).';

describe('limits', () => {
  it('answers 413 to a body over 1 MiB', async () => {
    const huge = JSON.stringify(makeEvent('limits_app', { custom_data: { blob: 'x'.repeat(1_100_000) } }));
    expect(await send(huge)).toEqual({ status: 413, json: { message: TOO_LARGE }, cors: 'https://app.example.com' });
  });

  it('answers 413 to a gzip bomb (10 MiB of zeros in ~10 KiB) without inflating it all', async () => {
    const bomb = new Uint8Array(zlib.gzipSync(Buffer.alloc(10 * 1024 * 1024, '0')));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const before = process.memoryUsage().rss;
    expect(await send(bomb, { 'content-encoding': 'gzip' })).toMatchObject({
      status: 413,
      json: { message: TOO_LARGE },
    });
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });

  it('answers 400 to a body that is not the gzip it claims to be', async () => {
    expect(await send('{"plain": true}', { 'content-encoding': 'gzip' })).toMatchObject({
      status: 400,
      json: { status: 400, message: 'VALIDATION_MISMATCH_REPORT', errors: ['body is not valid gzip data'] },
    });
  });

  it('answers 415 to an unsupported encoding or content type', async () => {
    expect(await send('{}', { 'content-encoding': 'compress' })).toMatchObject({
      status: 415,
      json: { message: expect.stringContaining('"compress" is not supported') },
    });
    expect(await send('{}', { 'content-type': 'text/plain' })).toMatchObject({
      status: 415,
      json: { message: 'Content-Type must be application/json.' },
    });
    expect(await send('a=1', { 'content-type': 'application/x-www-form-urlencoded' })).toMatchObject({ status: 415 });
  });

  it('refuses a body 400,000 arrays deep as nested too deeply, compressed or not, without building it', async () => {
    const deep = '['.repeat(400_000) + ']'.repeat(400_000);
    const refused = {
      status: 400,
      json: {
        status: 400,
        message: 'VALIDATION_MISMATCH_REPORT',
        errors: ['body is nested too deeply (at most 64 levels)'],
      },
    };
    expect(await send(deep)).toMatchObject(refused);
    expect(await send(new Uint8Array(zlib.gzipSync(deep)), { 'content-encoding': 'gzip' })).toMatchObject(refused);
  });

  it('counts no brackets inside strings, and still says which event nests too deeply', async () => {
    const brackets = '[{'.repeat(20_000);
    const quoted = makeEvent('limits_app', { custom_data: { note: `"\\${brackets}` } });
    expect(await send(JSON.stringify(quoted))).toMatchObject({ status: 201 });

    let nested: unknown = 0;
    for (let level = 0; level < 17; level++) nested = { level: nested };
    const tooDeep = [makeEvent('limits_app', { custom_data: { pad: brackets, nested } })];
    expect(await send(JSON.stringify(tooDeep))).toMatchObject({
      status: 400,
      json: { errors: ['events[0] is nested too deeply (at most 16 levels)'] },
    });
  });

  it('refuses prototype-polluting keys', async () => {
    const polluted = `{"__proto__":{"admin":true},${JSON.stringify(makeEvent('limits_app')).slice(1)}`;
    expect(await send(polluted)).toMatchObject({ status: 400, json: { message: 'VALIDATION_MISMATCH_REPORT' } });
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('accepts a gzip body whose decoded size is within the limit, and stays up after all of the above', async () => {
    const batch = Array.from({ length: 100 }, () =>
      makeEvent('limits_app', { custom_data: { note: 'y'.repeat(5_000) } }),
    );
    expect(
      await send(new Uint8Array(zlib.gzipSync(JSON.stringify(batch))), { 'content-encoding': 'gzip' }),
    ).toMatchObject({ status: 201 });
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
  });
});

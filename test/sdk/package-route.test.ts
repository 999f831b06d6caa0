// GET /sdk/…tgz: the built package's tarball under its versioned name (cached for good), a redirect to it from
// the unversioned name, 404 for other versions and files, 503 when the server has not built it.
import fs from 'node:fs';
import zlib from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SDK_PACKAGE_NAME, SDK_PACKAGE_VERSION, SDK_TARBALL } from '../../src/sdk-files.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const FILE = `${SDK_PACKAGE_NAME}-${SDK_PACKAGE_VERSION}.tgz`;

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.close());

async function get(path: string, init: RequestInit = {}) {
  return fetch(service.url + path, { redirect: 'manual', ...init });
}

describe('GET /sdk/<package>-<version>.tgz', () => {
  it('answers the tarball the build packed, as gzip, cached for good', async () => {
    const answer = await get(`/sdk/${FILE}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/gzip');
    expect(answer.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(answer.headers.get('content-disposition')).toBe(`attachment; filename="${FILE}"`);
    const body = Buffer.from(await answer.arrayBuffer());
    expect(body.equals(fs.readFileSync(SDK_TARBALL))).toBe(true);
    expect(Number(answer.headers.get('content-length'))).toBe(body.length);
    // an npm tarball: the package's files under package/, its manifest naming this version
    const tar = zlib.gunzipSync(body).toString('latin1');
    for (const file of ['package/package.json', 'package/index.js', 'package/index.d.ts']) expect(tar).toContain(file);
    expect(tar).toContain(`"version": "${SDK_PACKAGE_VERSION}"`);
  });

  it('answers HEAD with the headers and no body', async () => {
    const answer = await get(`/sdk/${FILE}`, { method: 'HEAD' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/gzip');
    expect((await answer.arrayBuffer()).byteLength).toBe(0);
  });

  it('answers 404 with a message naming the version it serves for another version', async () => {
    const answer = await get(`/sdk/${SDK_PACKAGE_NAME}-9.9.9.tgz`);
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await answer.json()).toEqual({
      message: `This server has no version 9.9.9 of ${SDK_PACKAGE_NAME}: it serves ${SDK_PACKAGE_NAME} ${SDK_PACKAGE_VERSION} as /sdk/${FILE}.`,
    });
  });

  it('answers 404 with the same guidance for any other name under /sdk/, never a 5xx', async () => {
    for (const path of [
      '/sdk/index.js',
      `/sdk/${SDK_PACKAGE_NAME}-.tgz`,
      `/sdk/${SDK_PACKAGE_NAME}-${SDK_PACKAGE_VERSION}.tar.gz`,
      `/sdk/${SDK_PACKAGE_NAME}-${'9'.repeat(60)}.tgz`, // longer names meet Fastify's own 414
      '/sdk/%00',
      '/sdk/..%2Fpackage.json',
      '/sdk/%E2%80%AE',
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      const { message } = (await answer.json()) as { message: string };
      expect(message, path).toContain(`/sdk/${FILE}`);
      expect(message.length, path).toBeLessThan(200);
    }
  });
});

describe('GET /sdk/<package>.tgz', () => {
  it('redirects to the versioned tarball, relative to /sdk/, uncached', async () => {
    const answer = await get(`/sdk/${SDK_PACKAGE_NAME}.tgz`);
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe(FILE);
    expect(answer.headers.get('cache-control')).toBe('no-cache');
    expect(new URL(answer.headers.get('location')!, answer.url).pathname).toBe(`/sdk/${FILE}`);
  });

  it('ends, for a client that follows redirects, at the tarball', async () => {
    const answer = await get(`/sdk/${SDK_PACKAGE_NAME}.tgz`, { redirect: 'follow' });
    expect(answer.status).toBe(200);
    expect(answer.url).toBe(`${service.url}/sdk/${FILE}`);
    expect(Buffer.from(await answer.arrayBuffer()).equals(fs.readFileSync(SDK_TARBALL))).toBe(true);
  });
});

it('describes both routes in /openapi.json', async () => {
  const document = (await (await get('/openapi.json')).json()) as { paths: Record<string, { get?: unknown }> };
  expect(document.paths[`/sdk/${SDK_PACKAGE_NAME}.tgz`]?.get).toBeDefined();
  expect(document.paths['/sdk/{file}']?.get).toBeDefined();
});

describe('on a server where the package is not built', () => {
  it('answers 503 on both names, and still 404 for another version', async () => {
    vi.resetModules();
    vi.doMock('../../src/sdk-files.ts', async (original) => ({
      ...(await original<typeof import('../../src/sdk-files.ts')>()),
      SDK_TARBALL: `${SDK_TARBALL}.missing`,
    }));
    const { sdkPackageRoutes } = await import('../../src/ingest/sdk-package.ts');
    const app = Fastify({ logger: false });
    try {
      await app.register(sdkPackageRoutes);
      for (const url of [`/sdk/${FILE}`, `/sdk/${SDK_PACKAGE_NAME}.tgz`]) {
        const answer = await app.inject({ method: 'GET', url });
        expect(answer.statusCode, url).toBe(503);
        expect(answer.json(), url).toEqual({
          message: 'The SDK package is not built: run "npm run build:sdk" on the server.',
        });
      }
      expect((await app.inject({ method: 'GET', url: `/sdk/${SDK_PACKAGE_NAME}-0.0.1.tgz` })).statusCode).toBe(404);
    } finally {
      await app.close();
      vi.doUnmock('../../src/sdk-files.ts');
    }
  });
});

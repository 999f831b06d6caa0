// GET /sdk/…tgz: each built package's tarball (the SDK's and the grammY middleware's) under its versioned name (cached
// for good), a redirect to it from the unversioned name, 404 for other versions and files, 503 when the server has not
// built it.
import fs from 'node:fs';
import zlib from 'node:zlib';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  GRAMMY_PACKAGE_NAME,
  GRAMMY_TARBALL,
  SDK_PACKAGE_NAME,
  SDK_PACKAGE_VERSION,
  SDK_TARBALL,
} from '../../src/sdk-serving/sdk-files.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

const FILE = `${SDK_PACKAGE_NAME}-${SDK_PACKAGE_VERSION}.tgz`;
const GRAMMY_FILE = `${GRAMMY_PACKAGE_NAME}-${SDK_PACKAGE_VERSION}.tgz`;
const PACKAGES = [
  { name: SDK_PACKAGE_NAME, file: FILE, tarball: SDK_TARBALL },
  { name: GRAMMY_PACKAGE_NAME, file: GRAMMY_FILE, tarball: GRAMMY_TARBALL },
];

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.close());

async function get(path: string, init: RequestInit = {}) {
  return fetch(service.url + path, { redirect: 'manual', ...init });
}

describe('GET /sdk/<package>-<version>.tgz', () => {
  it.each(PACKAGES)('answers the tarball the build packed of $name, as gzip, cached for good', async (served) => {
    const answer = await get(`/sdk/${served.file}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/gzip');
    expect(answer.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(answer.headers.get('content-disposition')).toBe(`attachment; filename="${served.file}"`);
    const body = Buffer.from(await answer.arrayBuffer());
    expect(body.equals(fs.readFileSync(served.tarball))).toBe(true);
    expect(Number(answer.headers.get('content-length'))).toBe(body.length);
    // an npm tarball: the package's files under package/, its manifest naming this version
    const tar = zlib.gunzipSync(body).toString('latin1');
    for (const file of ['package/package.json', 'package/index.js', 'package/index.d.ts']) expect(tar).toContain(file);
    expect(tar).toContain(`"name": "${served.name}"`);
    expect(tar).toContain(`"version": "${SDK_PACKAGE_VERSION}"`);
  });

  it('answers HEAD with the headers and no body', async () => {
    const answer = await get(`/sdk/${FILE}`, { method: 'HEAD' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/gzip');
    expect((await answer.arrayBuffer()).byteLength).toBe(0);
  });

  it.each(
    PACKAGES,
  )('answers 404 with a message naming the version it serves for another version of $name', async (served) => {
    const answer = await get(`/sdk/${served.name}-9.9.9.tgz`);
    expect(answer.status).toBe(404);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await answer.json()).toEqual({
      message: `This server has no version 9.9.9 of ${served.name}: it serves ${served.name} ${SDK_PACKAGE_VERSION} as /sdk/${served.file}.`,
    });
  });

  it('answers 404 with the same guidance for any other name under /sdk/, never a 5xx', async () => {
    for (const path of [
      '/sdk/index.js',
      `/sdk/${SDK_PACKAGE_NAME}-.tgz`,
      `/sdk/${SDK_PACKAGE_NAME}-${SDK_PACKAGE_VERSION}.tar.gz`,
      `/sdk/${SDK_PACKAGE_NAME}-${'9'.repeat(60)}.tgz`, // longer names meet Fastify's own 414
      `/sdk/${GRAMMY_PACKAGE_NAME}-.tgz`,
      `/sdk/${GRAMMY_PACKAGE_NAME}-${'9'.repeat(60)}.tgz`,
      '/sdk/%00',
      '/sdk/..%2Fpackage.json',
      '/sdk/%E2%80%AE',
    ]) {
      const answer = await get(path);
      expect(answer.status, path).toBe(404);
      const { message } = (await answer.json()) as { message: string };
      // the file of the package the name asks for, or of every package
      expect(message, path).toContain(path.includes(GRAMMY_PACKAGE_NAME) ? `/sdk/${GRAMMY_FILE}` : `/sdk/${FILE}`);
      expect(message.length, path).toBeLessThan(200);
    }
  });
});

it('names every package it serves for a file of none of them', async () => {
  const answer = await get('/sdk/index.js');
  expect(answer.status).toBe(404);
  expect(await answer.json()).toEqual({
    message: `This server has no such file: it serves ${SDK_PACKAGE_NAME} ${SDK_PACKAGE_VERSION} as /sdk/${FILE} and ${GRAMMY_PACKAGE_NAME} ${SDK_PACKAGE_VERSION} as /sdk/${GRAMMY_FILE}.`,
  });
});

describe.each(PACKAGES)('GET /sdk/$name.tgz', (served) => {
  it('redirects to the versioned tarball, relative to /sdk/, uncached', async () => {
    const answer = await get(`/sdk/${served.name}.tgz`);
    expect(answer.status).toBe(302);
    expect(answer.headers.get('location')).toBe(served.file);
    expect(answer.headers.get('cache-control')).toBe('no-cache');
    expect(new URL(answer.headers.get('location')!, answer.url).pathname).toBe(`/sdk/${served.file}`);
  });

  it('ends, for a client that follows redirects, at the tarball', async () => {
    const answer = await get(`/sdk/${served.name}.tgz`, { redirect: 'follow' });
    expect(answer.status).toBe(200);
    expect(answer.url).toBe(`${service.url}/sdk/${served.file}`);
    expect(Buffer.from(await answer.arrayBuffer()).equals(fs.readFileSync(served.tarball))).toBe(true);
  });
});

it('describes the routes in /openapi.json', async () => {
  const document = (await (await get('/openapi.json')).json()) as { paths: Record<string, { get?: unknown }> };
  expect(document.paths[`/sdk/${SDK_PACKAGE_NAME}.tgz`]?.get).toBeDefined();
  expect(document.paths[`/sdk/${GRAMMY_PACKAGE_NAME}.tgz`]?.get).toBeDefined();
  expect(document.paths['/sdk/{file}']?.get).toBeDefined();
});

describe('on a server where the package is not built', () => {
  it('answers 503 on both names of each package, and still 404 for another version', async () => {
    vi.resetModules();
    vi.doMock('../../src/sdk-serving/sdk-files.ts', async (original) => ({
      ...(await original<typeof import('../../src/sdk-serving/sdk-files.ts')>()),
      SDK_TARBALL: `${SDK_TARBALL}.missing`,
      GRAMMY_TARBALL: `${GRAMMY_TARBALL}.missing`,
    }));
    const { sdkPackageRoutes } = await import('../../src/sdk-serving/package-routes.ts');
    const app = Fastify({ logger: false });
    try {
      await app.register(sdkPackageRoutes);
      for (const [label, urls] of [
        ['The SDK package', [`/sdk/${FILE}`, `/sdk/${SDK_PACKAGE_NAME}.tgz`]],
        ['The grammY middleware package', [`/sdk/${GRAMMY_FILE}`, `/sdk/${GRAMMY_PACKAGE_NAME}.tgz`]],
      ] as const)
        for (const url of urls) {
          const answer = await app.inject({ method: 'GET', url });
          expect(answer.statusCode, url).toBe(503);
          expect(answer.json(), url).toEqual({
            message: `${label} is not built: run "npm run build:sdk" on the server.`,
          });
        }
      expect((await app.inject({ method: 'GET', url: `/sdk/${SDK_PACKAGE_NAME}-0.0.1.tgz` })).statusCode).toBe(404);
    } finally {
      await app.close();
      vi.doUnmock('../../src/sdk-serving/sdk-files.ts');
    }
  });
});

// GET /openapi.json is made on its first request: a making that fails is tried again, not served as that failure.
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { collectOpenApi, openApiDocument } from '../../src/app/openapi.ts';

describe('the OpenAPI document', () => {
  it('is made again on the next request after a making failed, and then kept', async () => {
    const app = Fastify();
    let makings = 0;
    const document = collectOpenApi(app, async (routes, schemas) => {
      makings++;
      if (makings === 1) throw new Error('EMFILE: too many open files');
      return openApiDocument(routes, schemas);
    });
    app.get('/ping', { schema: { response: { 200: { type: 'string' } } } }, async () => 'pong');
    await app.ready();
    await expect(document()).rejects.toThrow('EMFILE');
    const made = (await document()) as { paths: Record<string, unknown> };
    expect(Object.keys(made.paths)).toEqual(['/ping']);
    expect(await document()).toBe(made);
    expect(makings).toBe(2);
    await app.close();
  });
});

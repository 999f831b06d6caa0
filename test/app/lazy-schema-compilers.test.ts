// The lazy schema compilers: a start compiles no route schema, and a route's first request compiles its own and then
// checks, coerces, reports and serialises exactly as Fastify's default compilers do.
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Build,
  type CompilerSources,
  FASTIFY_COMPILERS,
  lazySchemaController,
} from '../../src/app/lazy-schema-compilers.ts';

/** Fastify's default compilers, counting each route schema they compile */
function countingSources(): CompilerSources & { compiled: string[] } {
  const compiled: string[] = [];
  const counting =
    <T>(make: () => Build<T>): (() => Build<T>) =>
    () => {
      const build = make();
      return (externalSchemas, options) => {
        const compile = build(externalSchemas, options);
        return (routeSchema) => {
          compiled.push(`${routeSchema.method} ${routeSchema.url}`);
          return compile(routeSchema);
        };
      };
    };
  return {
    compiled,
    validators: counting(FASTIFY_COMPILERS.validators),
    serializers: counting(FASTIFY_COMPILERS.serializers),
  };
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function appWith(sources: CompilerSources): Promise<FastifyInstance> {
  app = Fastify({ schemaController: lazySchemaController(sources) });
  app.get(
    '/items/:id',
    {
      schema: {
        params: { type: 'object', properties: { id: { type: 'integer' } } },
        querystring: { type: 'object', properties: { limit: { type: 'integer', maximum: 10 } } },
      },
    },
    async (request) => {
      const { limit } = request.query as { limit?: unknown };
      return { limitType: typeof limit };
    },
  );
  app.get(
    '/profile',
    { schema: { response: { 200: { type: 'object', properties: { name: { type: 'string' } } } } } },
    async () => ({ name: 'Ann', secret: 'never sent' }),
  );
  app.get(
    '/formatted',
    {
      schema: { querystring: { type: 'object', properties: { q: { type: 'string', maxLength: 3 } } } },
      schemaErrorFormatter: (errors) => new Error(`bad ${errors[0]?.instancePath}`),
    },
    async () => ({ ok: true }),
  );
  await app.ready();
  return app;
}

describe('lazy schema compilers', () => {
  it('compile no route schema while the app starts', async () => {
    const sources = countingSources();
    await appWith(sources);
    expect(sources.compiled).toEqual([]);
  });

  it("compile a route's schemas on its first request only, then coerce and check as Fastify does", async () => {
    const sources = countingSources();
    const server = await appWith(sources);
    const ok = await server.inject({ url: '/items/7?limit=3' });
    expect(ok.statusCode).toBe(200);
    // the query's number arrives as a number: Ajv's coercion ran on the request's own object
    expect(ok.json()).toEqual({ limitType: 'number' });
    expect(sources.compiled).toEqual(['GET /items/:id', 'GET /items/:id']);

    const badParam = await server.inject({ url: '/items/seven' });
    expect(badParam.statusCode).toBe(400);
    expect(badParam.json().message).toBe('params/id must be integer');
    const badQuery = await server.inject({ url: '/items/7?limit=11' });
    expect(badQuery.statusCode).toBe(400);
    expect(badQuery.json().message).toBe('querystring/limit must be <= 10');
    expect(sources.compiled).toHaveLength(2);
  });

  it("pass Ajv's errors to a route's own error formatter", async () => {
    const server = await appWith(countingSources());
    const bad = await server.inject({ url: '/formatted?q=toolong' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe('bad /q');
  });

  it('serialise a response by its schema, compiled once', async () => {
    const sources = countingSources();
    const server = await appWith(sources);
    for (let n = 0; n < 2; n++) {
      const answer = await server.inject({ url: '/profile' });
      expect(answer.json()).toEqual({ name: 'Ann' });
    }
    expect(sources.compiled).toEqual(['GET /profile']);
  });
});

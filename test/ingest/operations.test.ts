// What operators rely on: /healthz, /metrics and /openapi.json tell the truth about the service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MESSAGES } from '../../src/ingest/http-error.ts';
import { TOKEN_HEADERS } from '../../src/ingest/steps.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.close());

interface OpenApiOperation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description?: string }>;
}

interface OpenApiDocument {
  openapi: string;
  info: Record<string, unknown>;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, unknown> & { Event: { required: string[]; properties: Record<string, unknown> } };
  };
}

function metric(text: string, line: string): number {
  const found = text.split('\n').find((entry) => entry.startsWith(line + ' '));
  return found ? Number(found.slice(line.length + 1)) : 0;
}

describe('operations endpoints', () => {
  it('/healthz answers 200 with the store kind', async () => {
    const response = await fetch(`${service.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      status: 'ok',
      store: 'embedded',
      backlog: {
        requests: expect.any(Number),
        events: expect.any(Number),
        bytes: expect.any(Number),
        oldest_seconds: expect.any(Number),
      },
      loaded_through: expect.any(Number),
      store_last_success_seconds: expect.any(Number),
    });
  });

  it('/metrics counts requests by status, accepted and rejected events, commits and how long requests waited for the store', async () => {
    const token = await service.createApp('metrics_app');
    await postEvents(service.url, [makeEvent('metrics_app'), makeEvent('metrics_app')], { token });
    await postEvents(service.url, makeEvent('metrics_app'), { token, origin: 'https://other.example' });
    await service.loaded();
    const text = await (await fetch(`${service.url}/metrics`)).text();
    expect(metric(text, 'tma_events_accepted_total')).toBe(2);
    expect(metric(text, 'tma_events_stored_total')).toBe(2);
    expect(metric(text, 'tma_events_rejected_total{status="403"}')).toBe(1);
    expect(metric(text, 'tma_http_requests_total{route="/events",status="201"}')).toBe(1);
    expect(metric(text, 'tma_commit_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    // the one request acknowledged waited for the store once, well within a minute
    expect(metric(text, 'tma_request_freshness_seconds_count')).toBe(1);
    expect(metric(text, 'tma_request_freshness_seconds_bucket{le="60"}')).toBe(1);
  });

  it("/metrics splits the embedded store's memory: its thread's heap and its WebAssembly memory", async () => {
    const text = await (await fetch(`${service.url}/metrics`)).text();
    // PGlite's WebAssembly memory starts at 128 MiB (its minimum) and only grows
    expect(metric(text, 'tma_embedded_wasm_memory_bytes')).toBeGreaterThanOrEqual(128 * 1024 ** 2);
    expect(metric(text, 'tma_embedded_thread_heap_used_bytes')).toBeGreaterThan(0);
    expect(metric(text, 'tma_embedded_thread_heap_total_bytes')).toBeGreaterThanOrEqual(
      metric(text, 'tma_embedded_thread_heap_used_bytes'),
    );
    expect(metric(text, 'tma_embedded_thread_external_bytes')).toBeGreaterThan(0);
  });

  it("/events/threshold answers the official client's caps, with CORS", async () => {
    const response = await fetch(`${service.url}/events/threshold`, {
      headers: { origin: 'https://mini.example.org' },
    });
    expect(await response.json()).toEqual({ 'app-hide': 3 });
    expect(response.headers.get('access-control-allow-origin')).toBe('https://mini.example.org');
  });

  it('/openapi.json describes POST /events with every answer and the event schema', async () => {
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as OpenApiDocument;
    expect(document.openapi).toBe('3.1.0');
    const post = document.paths['/events']!.post!;
    expect(Object.keys(post.responses).sort()).toEqual(['201', '400', '403', '413', '415', '429']);
    expect(JSON.stringify(post.responses)).toContain('Too many requests. Try again later.');
    for (const text of Object.values(MESSAGES)) expect(JSON.stringify(post.responses)).toContain(JSON.stringify(text));
    expect(document.components.schemas.Event.required).toEqual(['user_id', 'event_name', 'session_id', 'app_name']);
    expect(Object.keys(document.components.schemas.Event.properties)).toHaveLength(22);
    // the body: one event, or an array of 1..MAX_EVENTS_PER_REQUEST events
    const event = { $ref: '#/components/schemas/Event' };
    expect(post.requestBody!.content['application/json']!.schema).toMatchObject({
      oneOf: [
        event,
        { type: 'array', minItems: 1, maxItems: service.services.config.maxEventsPerRequest, items: event },
      ],
    });
    const headers = post.parameters!.filter((parameter) => parameter.in === 'header').map(({ name }) => name);
    expect(headers).toEqual(expect.arrayContaining([...TOKEN_HEADERS]));
  });

  it('/openapi.json is an OpenAPI 3.1 document of the routes the service serves', async () => {
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as OpenApiDocument;
    expect(document.info).toMatchObject({ title: expect.any(String), version: expect.any(String) });
    for (const path of ['/events/threshold', '/healthz', '/metrics', '/openapi.json', '/index.js']) {
      expect(document.paths[path]?.get, path).toBeDefined();
    }
    expect(document.paths['/healthz']!.get!.responses['200']).toMatchObject({
      content: {
        'application/json': {
          schema: { required: ['status', 'store', 'backlog', 'loaded_through', 'store_last_success_seconds'] },
        },
      },
    });
    // a route's declared path parameters appear with their pattern
    expect(document.paths['/api/apps/{name}']!.get!.parameters).toContainEqual(
      expect.objectContaining({
        in: 'path',
        name: 'name',
        required: true,
        schema: expect.objectContaining({ pattern: expect.any(String) }),
      }),
    );
    for (const [path, item] of Object.entries(document.paths)) {
      expect(path).toMatch(/^\//);
      for (const [method, operation] of Object.entries(item)) {
        expect(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']).toContain(method);
        expect(Object.keys(operation.responses).length, `${method} ${path}`).toBeGreaterThan(0);
        for (const response of Object.values(operation.responses))
          expect(response.description).toEqual(expect.any(String));
      }
    }
    // every reference points into the document
    const references = [...JSON.stringify(document).matchAll(/"\$ref":"([^"]*)"/g)].map(([, target]) => target!);
    expect(references.length).toBeGreaterThan(0);
    for (const target of references) {
      const name = target.match(/^#\/components\/schemas\/(.+)$/)?.[1];
      expect(name && document.components.schemas[name], target).toBeDefined();
    }
  });
});

// What operators rely on: /healthz, /metrics and /openapi.json tell the truth about the service.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;

beforeAll(async () => {
  service = await startTestService();
});
afterAll(() => service?.close());

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

  it("/events/threshold answers the official client's caps, with CORS", async () => {
    const response = await fetch(`${service.url}/events/threshold`, {
      headers: { origin: 'https://mini.example.org' },
    });
    expect(await response.json()).toEqual({ 'app-hide': 3 });
    expect(response.headers.get('access-control-allow-origin')).toBe('https://mini.example.org');
  });

  it('/openapi.json describes POST /events with every answer and the event schema', async () => {
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: { Event: { required: string[]; properties: Record<string, unknown> } } };
    };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths['/events']!.post!.responses).sort()).toEqual([
      '201',
      '400',
      '403',
      '413',
      '415',
      '429',
    ]);
    expect(JSON.stringify(document.paths['/events']!.post!.responses)).toContain('Too many requests. Try again later.');
    expect(document.components.schemas.Event.required).toEqual(['user_id', 'event_name', 'session_id', 'app_name']);
    expect(Object.keys(document.components.schemas.Event.properties)).toHaveLength(22);
  });
});

// The read API end to end on both engines: events sent to POST /events by a mini app, read back with a read key as
// the integrator's tools would, compared with answers worked out by hand; keys that are missing, revoked or another
// app's; parameters that are wrong; the rate limit; the OpenAPI document.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../../src/events/days.ts';
import { OPERATOR } from '../../src/tokens/registry.ts';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND } from '../helpers/stores.ts';

const today = new Date().toISOString().slice(0, 10);
/** the first day of the data set: ten days ago, so day 7 of its cohort has come */
const first = addDays(today, -10);
const at = (day: string, minutes: number) => String(Date.parse(`${day}T00:00:00Z`) + 9 * 3_600_000 + minutes * 60_000);

async function get(service: TestService, path: string, key?: string) {
  const response = await fetch(`${service.url}${path}`, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe(`read API on ${SERVICE_BACKEND.name}`, () => {
  let service: TestService;
  let drop: () => Promise<void>;
  let key: string;
  let otherKey: string;

  beforeAll(async () => {
    const backend = await SERVICE_BACKEND.open();
    drop = backend.drop;
    service = await startTestService(backend.env);
    expectProjectStore(service.store);
    const token = await service.createApp('read_app');
    await service.createApp('other_app');
    ({ key } = await service.services.readKeys.create('read_app', OPERATOR));
    ({ key: otherKey } = await service.services.readKeys.create('other_app', OPERATOR));
    const session = () => crypto.randomUUID();
    const [s1, s2, s3] = [session(), session(), session()];
    const events = [
      // user 1 arrives with "promo", buys gold, comes back the next day and a week later
      makeEvent('read_app', { user_id: 1, session_id: s1, start_param: 'promo', client_timestamp: at(first, 0) }),
      makeEvent('read_app', {
        user_id: 1,
        session_id: s1,
        start_param: 'promo',
        event_name: 'custom-event',
        custom_data: { name: 'purchase', sku: 'gold' },
        client_timestamp: at(first, 10),
      }),
      makeEvent('read_app', { user_id: 1, session_id: session(), client_timestamp: at(addDays(first, 1), 0) }),
      makeEvent('read_app', { user_id: 1, session_id: session(), client_timestamp: at(addDays(first, 7), 0) }),
      // user 2 arrives with "promo" and connects a wallet
      makeEvent('read_app', { user_id: 2, session_id: s2, start_param: 'promo', client_timestamp: at(first, 5) }),
      makeEvent('read_app', {
        user_id: 2,
        session_id: s2,
        start_param: 'promo',
        event_name: 'connection-completed',
        is_success: true,
        client_timestamp: at(first, 6),
      }),
      // user 3 arrives two days later without a campaign
      makeEvent('read_app', { user_id: 3, session_id: s3, client_timestamp: at(addDays(first, 2), 0) }),
    ];
    expect((await postEvents(service.url, events, { token })).status).toBe(201);
    await service.loaded();
  });
  afterAll(async () => {
    await service?.close();
    await drop?.();
  });

  const path = (route: string, query = `from=${first}&to=${today}`) => `/api/v1/apps/read_app/${route}?${query}`;

  it('answers each insight with the numbers of the events sent, naming the period', async () => {
    const period = { from: first, to: today };
    expect(await get(service, path('summary'), key)).toEqual({
      status: 200,
      body: { period, events: 7, users: 3, verified_users: 0, sessions: 5, new_users: 3 },
    });

    const retention = await get(service, path('retention'), key);
    expect(retention.status).toBe(200);
    expect(retention.body).toEqual({
      period,
      cohorts: [
        // the last cell of each falls on today: still growing
        { day: first, users: 2, retained: [2, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0], complete: 10 },
        { day: addDays(first, 2), users: 1, retained: [1, 0, 0, 0, 0, 0, 0, 0, 0], complete: 8 },
      ],
    });

    expect(await get(service, path('campaigns'), key)).toEqual({
      status: 200,
      body: { period, campaigns: [{ start_param: 'promo', new_users: 2, retained_d7: 1, wallet_connections: 1 }] },
    });
    expect(await get(service, path('custom-events'), key)).toEqual({
      status: 200,
      body: { period, events: [{ name: 'purchase', count: 1, users: 1, properties: ['sku'] }] },
    });
    expect(await get(service, path('custom-events/purchase/properties/sku'), key)).toEqual({
      status: 200,
      body: { period, values: [{ value: 'gold', count: 1 }] },
    });
    expect(
      await get(service, path('funnel', `from=${first}&to=${today}&steps=app-init,purchase&by=user&window=1h`), key),
    ).toEqual({
      status: 200,
      body: {
        period,
        steps: [
          { name: 'app-init', count: 3, median_seconds_from_previous: null },
          { name: 'purchase', count: 1, median_seconds_from_previous: 600 },
        ],
      },
    });
  });

  it('narrows every answer with the filter parameters', async () => {
    const promo = `from=${first}&to=${today}&campaign=promo`;
    const period = { from: first, to: today };
    // a campaign keeps the users who first arrived with it, with their later sessions that carried no start_param
    expect((await get(service, path('summary', promo), key)).body).toEqual({
      period,
      events: 6,
      users: 2,
      verified_users: 0,
      sessions: 4,
      new_users: 2,
    });
    expect((await get(service, path('custom-events', `${promo}&premium=false`), key)).body).toEqual({
      period,
      events: [],
    });
    expect((await get(service, path('campaigns', `${promo}&platform=no_such_platform`), key)).body).toEqual({
      period,
      campaigns: [],
    });
    const cohorts = (await get(service, path('retention', promo), key)).body.cohorts as {
      day: string;
      users: number;
    }[];
    expect(cohorts.map((cohort) => [cohort.day, cohort.users])).toEqual([[first, 2]]);
    // the funnel too: user 1's later sessions, launched without a start_param, are the campaign's
    const funnel = async (by: string) =>
      (
        (await get(service, path('funnel', `${promo}&steps=app-init,purchase&by=${by}&window=1h`), key)).body.steps as {
          count: number;
        }[]
      ).map((step) => step.count);
    expect(await funnel('session')).toEqual([4, 1]);
    expect(await funnel('user')).toEqual([2, 1]);
  });

  it('reads the last 30 days when no period is given, and says which', async () => {
    const { body } = await get(service, '/api/v1/apps/read_app/summary', key);
    expect(body).toEqual({
      period: { from: addDays(today, -29), to: today },
      events: 7,
      users: 3,
      verified_users: 0,
      sessions: 5,
      new_users: 3,
    });
    // a period before the data: nothing
    const before = addDays(first, -5);
    expect((await get(service, path('summary', `from=${before}&to=${before}`), key)).body).toEqual({
      period: { from: before, to: before },
      events: 0,
      users: 0,
      verified_users: 0,
      sessions: 0,
      new_users: 0,
    });
  });

  it('refuses a request without a valid key of this app, and a key once revoked', async () => {
    const noKey = await get(service, path('summary'));
    expect(noKey.status).toBe(401);
    expect(noKey.body.message).toMatch(/Authorization: Bearer tma_read_/);
    expect((await get(service, path('summary'), 'tma_read_made_up_key_000000000000000000')).status).toBe(401);
    const other = await get(service, path('summary'), otherKey);
    expect(other).toEqual({ status: 403, body: { message: 'This read key does not read this app.' } });
    // an app that does not exist is refused the same way: keys do not tell which apps exist
    expect((await get(service, '/api/v1/apps/no_such_app/summary', key)).status).toBe(403);

    const { key: doomed, readKey } = await service.services.readKeys.create('read_app', OPERATOR);
    expect((await get(service, path('summary'), doomed)).status).toBe(200);
    await service.services.readKeys.revoke(readKey.prefix, OPERATOR);
    expect((await get(service, path('summary'), doomed)).status).toBe(401);
  });

  it('names the parameter that is wrong', async () => {
    const cases: [string, RegExp][] = [
      [path('summary', 'from=2026-13-01'), /"from" must be a day as YYYY-MM-DD/],
      [path('summary', `from=${today}&to=${first}`), /is after "to"/],
      [path('summary', 'from=2020-01-01&to=2026-01-01'), /longer than 366 days/],
      [path('funnel', 'steps=app-init'), /"steps" must name 2 to 6 event names/],
      [path('funnel', 'steps=a,b,c,d,e,f,g'), /"steps" must name 2 to 6/],
      [path('funnel', 'steps=a,b&by=device'), /^The query parameter "by" must be one of "user", "session"\.$/],
      [path('funnel', 'steps=a,b&window=forever'), /"window" must be a duration/],
      [path('funnel', 'steps=a,b&window=100d'), /at most 90 days/],
      [path('summary', 'premium=yes'), /^The query parameter "premium" must be one of "true", "false"\.$/],
      [path('summary', 'verified=maybe'), /^The query parameter "verified" must be one of "true", "false"\.$/],
      // the year 0 is a day to JavaScript but not to PostgreSQL
      [path('summary', `from=0000-01-01&to=${today}`), /"from" must be a day as YYYY-MM-DD/],
      [path('retention', 'to=0000-12-31'), /"to" must be a day as YYYY-MM-DD/],
      [path('funnel'), /^The query parameter "steps" is required\.$/],
      [path('summary', 'platform=a%00'), /^The query parameter "platform" must not contain a NUL character\.$/],
      [path('funnel', 'steps=a%00,b'), /^The query parameter "steps" must not contain a NUL character\.$/],
      [path('custom-events/a%00/properties/b'), /^The path parameter "name" must not contain a NUL character\.$/],
    ];
    for (const [url, message] of cases) {
      const { status, body } = await get(service, url, key);
      expect({ url, status }).toEqual({ url, status: 400 });
      expect(body.message).toMatch(message);
    }
  });

  it('is described in /openapi.json with its parameters, answers and the read key', async () => {
    const document = (await (await fetch(`${service.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { security?: unknown; parameters?: { name: string }[]; responses: object }>>;
      components: { securitySchemes: Record<string, unknown> };
    };
    const routes = Object.keys(document.paths).filter((route) => route.startsWith('/api/v1/'));
    expect(routes.sort()).toEqual([
      '/api/v1/apps/{app}/campaigns',
      '/api/v1/apps/{app}/custom-events',
      '/api/v1/apps/{app}/custom-events/{name}/properties/{property}',
      '/api/v1/apps/{app}/funnel',
      '/api/v1/apps/{app}/retention',
      '/api/v1/apps/{app}/revenue',
      '/api/v1/apps/{app}/summary',
    ]);
    const funnel = document.paths['/api/v1/apps/{app}/funnel']!.get!;
    expect(funnel.security).toEqual([{ readKey: [] }]);
    expect(funnel.parameters!.map((parameter) => parameter.name).sort()).toEqual(
      ['app', 'by', 'campaign', 'from', 'language', 'platform', 'premium', 'steps', 'to', 'verified', 'window'].sort(),
    );
    expect(Object.keys(funnel.responses).sort()).toEqual(['200', '400', '401', '403', '429', '503']);
    expect(document.components.securitySchemes.readKey).toMatchObject({ type: 'http', scheme: 'bearer' });
  });
});

describe('read API rate limit', () => {
  let service: TestService;

  beforeAll(async () => {
    service = await startTestService({ READ_API_RATE_LIMIT_MAX: '3' });
    await service.createApp('limited_app');
  });
  afterAll(() => service?.close());

  it('limits each key to its requests a minute, with Retry-After, while other keys go on', async () => {
    const { key } = await service.services.readKeys.create('limited_app', OPERATOR);
    const { key: second } = await service.services.readKeys.create('limited_app', OPERATOR);
    const url = `${service.url}/api/v1/apps/limited_app/summary`;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push((await fetch(url, { headers: { authorization: `Bearer ${key}` } })).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const refused = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused.json()) as { message: string }).message).toMatch(/at most 3 a minute/);
    expect((await fetch(url, { headers: { authorization: `Bearer ${second}` } })).status).toBe(200);
  });
});

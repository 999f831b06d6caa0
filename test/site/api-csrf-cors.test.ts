// Cross-site requests to the site API: writes from another origin or not in JSON refused with nothing
// changed, writes from the public address accepted, and no CORS headers that would let another site read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents } from '../helpers/events.ts';
import type { TestService } from '../helpers/service.ts';
import { appRow, create, PUBLIC_URL, startSiteApi } from './api-harness.ts';
import type { SiteClient } from './site-harness.ts';

let service: TestService;
let alice: SiteClient;

beforeAll(async () => {
  ({ service, alice } = await startSiteApi());
});
afterAll(() => service?.close());

describe('CSRF and CORS', () => {
  /** the token of csrf_target, the app the refused writes aim at (made here, so each test finds it) */
  let token: string;
  // Alice's app whose reads and preflights the CORS checks make, and the target of the refused writes
  beforeAll(async () => {
    await create(alice, 'alice_shop');
    token = await create(alice, 'csrf_target');
  });

  it('refuses writes from another origin with 403 and changes nothing', async () => {
    const before = await appRow('csrf_target');
    const writes: [string, string, unknown?][] = [
      ['POST', '/api/apps', { bot: '@csrf_new_bot', domain: 'csrf-new.example.com', app_name: 'csrf_new' }],
      ['POST', '/api/apps/csrf_target/revoke', {}],
      ['POST', '/api/apps/csrf_target/regenerate', {}],
      ['POST', '/api/apps/csrf_target/domains', { add: 'evil.example.com' }],
      ['DELETE', '/api/apps/csrf_target'],
    ];
    for (const origin of ['https://evil.example', 'null', `${service.url.replace('127.0.0.1', 'localhost')}`]) {
      for (const [method, path, body] of writes) {
        const answer = await alice.request(method, path, { body, origin });
        expect(answer.status, `${method} ${path} from ${origin}`).toBe(403);
        expect(answer.json).toEqual({ message: 'Cross-site or non-JSON request refused.' });
      }
    }
    expect(await appRow('csrf_new')).toBeNull();
    expect(await appRow('csrf_target')).toEqual(before);
    expect(
      (await postEvents(service.url, makeEvent('csrf_target'), { token, origin: 'https://csrf-target.example.com' }))
        .status,
    ).toBe(201);
  });

  it('accepts writes from the public address (PUBLIC_URL) when a reverse proxy passes on its own Host', async () => {
    // nginx's default proxy_pass sends Host: <upstream address>, here 127.0.0.1:<port>, while the
    // browser's Origin is the public address the user opened
    const created = await alice.post(
      '/api/apps',
      { bot: '@proxied_app_bot', domain: 'proxied.example.com', app_name: 'proxied_app' },
      { origin: PUBLIC_URL },
    );
    expect(created.status, created.text).toBe(201);
    expect(
      (await alice.post('/api/apps/proxied_app/domains', { add: 'proxied-2.example.com' }, { origin: PUBLIC_URL }))
        .status,
    ).toBe(200);
    expect((await alice.delete('/api/apps/proxied_app', { origin: PUBLIC_URL })).status).toBe(204);
  });

  it('refuses writes that are not JSON (what a cross-site form can send) and changes nothing', async () => {
    const before = await appRow('csrf_target');
    // no body and no content type: the site's guard answers
    for (const path of ['/api/apps/csrf_target/revoke', '/api/apps/csrf_target/regenerate']) {
      const answer = await alice.request('POST', path);
      expect(answer.status, path).toBe(403);
      expect(answer.json).toEqual({ message: 'Cross-site or non-JSON request refused.' });
    }
    // form encodings: the service has no parser for them, so they are refused before any route runs
    const forms = [
      ['text/plain', '{"bot":"@form_bot","domain":"form.example.com","app_name":"form_app"}'],
      ['application/x-www-form-urlencoded', 'bot=%40form_bot&domain=form.example.com&app_name=form_app'],
      [
        'multipart/form-data; boundary=x',
        '--x\r\nContent-Disposition: form-data; name="app_name"\r\n\r\nform_app\r\n--x--\r\n',
      ],
    ];
    for (const [type, raw] of forms) {
      for (const path of ['/api/apps', '/api/apps/csrf_target/revoke']) {
        const answer = await alice.request('POST', path, { raw, headers: { 'content-type': type! } });
        expect([403, 415], `${type} ${path}: ${answer.status} ${answer.text}`).toContain(answer.status);
      }
    }
    expect(await appRow('form_app')).toBeNull();
    expect(await appRow('csrf_target')).toEqual(before);
  });

  it('sends no CORS headers for the site API, and no allow-origin for a preflight from another origin', async () => {
    const origin = 'https://evil.example';
    for (const path of [
      '/api/me',
      '/api/apps',
      '/api/apps/alice_shop/dashboard?days=7',
      '/api/apps/alice_shop/export.csv?days=7',
    ]) {
      const answer = await alice.get(path, { origin });
      expect(answer.status, path).toBe(200);
      expect(
        [...answer.headers.keys()].filter((name) => name.startsWith('access-control-')),
        path,
      ).toEqual([]);
    }
    for (const path of ['/api/apps', '/api/apps/alice_shop/revoke', '/api/apps/alice_shop']) {
      const preflight = await alice.request('OPTIONS', path, {
        origin,
        headers: {
          'access-control-request-method': path === '/api/apps/alice_shop' ? 'DELETE' : 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(preflight.headers.get('access-control-allow-origin'), path).toBeNull();
      expect(preflight.headers.get('access-control-allow-credentials'), path).toBeNull();
      expect(preflight.headers.get('access-control-allow-methods'), path).toBeNull();
    }
    // the same preflight on the ingestion endpoint is allowed: the check above can see CORS headers
    const events = await alice.request('OPTIONS', '/events', {
      origin,
      headers: { 'access-control-request-method': 'POST' },
    });
    expect(events.headers.get('access-control-allow-origin')).toBe(origin);
  });
});

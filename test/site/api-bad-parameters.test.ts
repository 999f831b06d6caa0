// Bad request parameters on the site's pages and API: 400 with a readable message, never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { startSiteApi } from './api-harness.ts';
import { SiteClient } from './site-harness.ts';

let service: TestService;
let alice: SiteClient;

beforeAll(async () => {
  ({ service, alice } = await startSiteApi());
});
afterAll(() => service?.close());

describe('bad parameters', () => {
  it('answers 400 with a readable message to repeated, NUL-carrying and oversized parameters, never 500', async () => {
    const cases: [string, SiteClient, number, string | undefined][] = [
      [
        '/login/link?token=a&token=b',
        new SiteClient(service.url),
        400,
        'The query parameter "token" must be given once, as string.',
      ],
      [
        '/api/apps/app_b%00',
        alice,
        400,
        'The app name must be 3–64 characters: lowercase letters, digits, "_" or "-".',
      ],
      ['/api/apps/app_b%00/dashboard?days=7', alice, 400, undefined],
      [
        '/api/apps/app_b/dashboard?days=7&days=30',
        alice,
        400,
        'The query parameter "days" must be given once, as string.',
      ],
      [`/login?next=${'a'.repeat(5000)}`, new SiteClient(service.url), 400, undefined],
      ['/analytics?all=1&all=1', alice, 400, undefined],
      ['/api/apps/%E0%A4%A', alice, 400, undefined],
    ];
    for (const [path, client, status, message] of cases) {
      const answer = await client.get(path);
      expect(answer.status, path).toBe(status);
      if (message) expect(answer.json?.message, path).toBe(message);
    }
  });

  it('says in words what is wrong with a JSON body, where the ingest API answers VALIDATION_MISMATCH_REPORT', async () => {
    const json = { 'content-type': 'application/json' };
    const bodies: [string, string, string][] = [
      ['POST', '/api/apps/app_b/share', '{bad'],
      ['DELETE', '/api/apps/app_b/members/abc', ''],
      ['POST', '/api/apps/app_b/funnels', '{"name": {"__proto__": {}}}'],
    ];
    const answers = [];
    for (const [method, path, raw] of bodies)
      answers.push(await alice.request(method, path, { raw, headers: json }).then((a) => [a.status, a.json?.message]));
    expect(answers).toEqual([
      [400, 'The request body is not valid JSON.'],
      [400, 'The request body is not valid JSON.'],
      [400, 'The request body must not contain "__proto__" or "constructor.prototype" keys.'],
    ]);
  });
});

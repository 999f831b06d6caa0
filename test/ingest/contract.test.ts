// docs/spec.md §7 byte for byte over real HTTP: every status and message, both token headers, single event and
// array, gzip and plain, CORS preflight and CORS headers on every answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEvent, postEvents } from '../helpers/events.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

let service: TestService;
let token: string;

beforeAll(async () => {
  service = await startTestService({ RATE_LIMIT_MAX: '1000' });
  token = await service.createApp('contract_app', 'app.example.com');
});
afterAll(() => service?.close());

/** events in the store once it holds everything acknowledged */
async function storedCount(): Promise<number> {
  await service.loaded();
  const [row] = await service.store.sql.query<{ n: number }>('SELECT count(*)::int AS n FROM events');
  return row!.n;
}

describe('201 Success record.', () => {
  for (const header of ['ANALYTICS-Auth-Token', 'TGA-Auth-Token'] as const) {
    for (const gzip of [false, true]) {
      it(`stores a single event and an array with ${header}, ${gzip ? 'gzip' : 'plain'}`, async () => {
        const before = await storedCount();
        const single = await postEvents(service.url, makeEvent('contract_app'), { token, header, gzip });
        expect(single.status).toBe(201);
        expect(single.text).toBe('{"message":"Success record."}');
        const array = await postEvents(
          service.url,
          [makeEvent('contract_app'), makeEvent('contract_app', { event_name: 'app-hide' })],
          {
            token,
            header,
            gzip,
          },
        );
        expect(array.status).toBe(201);
        expect(array.text).toBe('{"message":"Success record."}');
        expect(await storedCount()).toBe(before + 3);
      });
    }
  }

  it('stores a retried request once when its events carry a client time, whatever the client clock says', async () => {
    const before = await storedCount();
    const batch = [
      makeEvent('contract_app'),
      makeEvent('contract_app', { client_timestamp: '1000000000000' }), // 2001: outside the trusted window
      makeEvent('contract_app', { client_timestamp: new Date().toISOString() }),
    ];
    for (let attempt = 0; attempt < 2; attempt++) {
      const answer = await postEvents(service.url, batch, { token, gzip: attempt === 1 });
      expect(answer.status).toBe(201);
      await new Promise((resolve) => setTimeout(resolve, 5)); // the retry is received at another time
    }
    expect(await storedCount()).toBe(before + batch.length);
  });

  it('stores every event that has no client time it can read, identical ones too (two real clicks)', async () => {
    const before = await storedCount();
    const click = makeEvent('contract_app', {
      event_name: 'custom-event',
      client_timestamp: undefined,
      custom_data: { button: 'buy' },
    });
    const unreadable = makeEvent('contract_app', { client_timestamp: 'yesterday' });
    const batch = [click, click, unreadable];
    for (let attempt = 0; attempt < 2; attempt++)
      expect((await postEvents(service.url, batch, { token })).status).toBe(201);
    expect(await storedCount()).toBe(before + 2 * batch.length);
  });

  it('accepts the Referer when there is no Origin, and ignores the port and case of the host', async () => {
    const viaReferer = await postEvents(service.url, makeEvent('contract_app'), {
      token,
      origin: null,
      headers: { referer: 'https://APP.example.com:8443/page?x=1' },
    });
    expect(viaReferer.status).toBe(201);
    const withPort = await postEvents(service.url, makeEvent('contract_app'), {
      token,
      origin: 'https://app.EXAMPLE.com:444',
    });
    expect(withPort.status).toBe(201);
  });
});

describe('400 token errors', () => {
  const missing = '{"message":"The token is not specified in the headers or is specified incorrectly."}';

  it('answers a missing token header', async () => {
    const response = await postEvents(service.url, makeEvent('contract_app'));
    expect(response.status).toBe(400);
    expect(response.text).toBe(missing);
  });

  it('answers an empty or malformed token header', async () => {
    for (const bad of ['', '   ', 'tma_with space', 'x'.repeat(600)]) {
      const response = await postEvents(service.url, makeEvent('contract_app'), { token: bad });
      expect(response.status, JSON.stringify(bad)).toBe(400);
      expect(response.text).toBe(missing);
    }
  });

  it('answers a well-formed token that was never issued', async () => {
    for (const header of ['ANALYTICS-Auth-Token', 'TGA-Auth-Token'] as const) {
      const response = await postEvents(service.url, makeEvent('contract_app'), {
        token: 'tma_' + 'A'.repeat(40),
        header,
      });
      expect(response.status).toBe(400);
      expect(response.text).toBe('{"message":"Token is invalid."}');
    }
  });

  it("answers an app_name that is not the token's, also when one event of an array is wrong", async () => {
    const single = await postEvents(service.url, makeEvent('other_app'), { token });
    expect(single.status).toBe(400);
    expect(single.text).toBe('{"message":"Invalid app_name is specified."}');
    const before = await storedCount();
    const mixed = await postEvents(service.url, [makeEvent('contract_app'), makeEvent('other_app')], { token });
    expect(mixed.text).toBe('{"message":"Invalid app_name is specified."}');
    expect(await storedCount()).toBe(before);
  });
});

describe('400 VALIDATION_MISMATCH_REPORT', () => {
  it('keeps the exact message and status and names what failed', async () => {
    const response = await postEvents(service.url, makeEvent('contract_app', { session_id: 'not-a-uuid' }), { token });
    expect(response.status).toBe(400);
    expect(response.json).toEqual({
      status: 400,
      message: 'VALIDATION_MISMATCH_REPORT',
      errors: ['event.session_id must be a UUID'],
    });
    expect(response.text.startsWith('{"status":400,"message":"VALIDATION_MISMATCH_REPORT"')).toBe(true);
  });

  it('treats a body that is not JSON as a validation failure', async () => {
    const response = await postEvents(service.url, '{"user_id": ', { token });
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({
      status: 400,
      message: 'VALIDATION_MISMATCH_REPORT',
      errors: ['body is not valid JSON'],
    });
  });

  it('says a body with prototype-polluting keys has them, and still calls malformed JSON and a null body by their names', async () => {
    const event = JSON.stringify(makeEvent('contract_app'));
    const forbidden = ['body must not contain "__proto__" or "constructor.prototype" keys'];
    for (const body of [
      `{"__proto__":{"admin":true},${event.slice(1)}`,
      `[${event.slice(0, -1)},"custom_data":{"\\u005f_proto__":1}}]`,
      `${event.slice(0, -1)},"custom_data":{"constructor":{"prototype":{"admin":true}}}}`,
    ]) {
      const response = await postEvents(service.url, body, { token });
      expect(response.json, body).toEqual({ status: 400, message: 'VALIDATION_MISMATCH_REPORT', errors: forbidden });
    }
    expect((await postEvents(service.url, '{"__proto__": ', { token })).json.errors).toEqual([
      'body is not valid JSON',
    ]);
    expect((await postEvents(service.url, ' null ', { token })).json.errors).toEqual([
      'body must be an event object or an array of event objects',
    ]);
  });
});

describe('403 The domain name does not match.', () => {
  it('answers a foreign Origin, a foreign Referer and a request with neither', async () => {
    for (const options of [
      { origin: 'https://other.site' },
      { origin: null, headers: { referer: 'https://evil.app.example.com.attacker.io/' } },
      { origin: null },
      { origin: 'null' },
    ]) {
      const response = await postEvents(service.url, makeEvent('contract_app'), { token, ...options });
      expect(response.status, JSON.stringify(options)).toBe(403);
      expect(response.text).toBe('{"message":"The domain name does not match."}');
    }
  });
});

describe('CORS', () => {
  it('answers the preflight of the official client for any origin', async () => {
    const response = await fetch(`${service.url}/events`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://any.site.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-encoding,content-type,tga-auth-token',
      },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://any.site.example');
    const allowed = response.headers.get('access-control-allow-headers')!.split(/,\s*/);
    for (const header of ['content-encoding', 'content-type', 'tga-auth-token', 'analytics-auth-token'])
      expect(allowed).toContain(header);
    expect(response.headers.get('access-control-allow-methods')).toContain('POST');
  });

  it('puts CORS headers on success and on every error answer', async () => {
    const answers = [
      await postEvents(service.url, makeEvent('contract_app'), { token, origin: 'https://app.example.com' }),
      await postEvents(service.url, makeEvent('contract_app'), { origin: 'https://app.example.com' }),
      await postEvents(service.url, makeEvent('contract_app'), {
        token: 'tma_' + 'B'.repeat(40),
        origin: 'https://app.example.com',
      }),
      await postEvents(service.url, makeEvent('contract_app'), { token, origin: 'https://elsewhere.example' }),
      await postEvents(service.url, 'nope', { token, origin: 'https://elsewhere.example' }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([201, 400, 400, 403, 400]);
    expect(answers.map((answer) => answer.headers.get('access-control-allow-origin'))).toEqual([
      'https://app.example.com',
      'https://app.example.com',
      'https://app.example.com',
      'https://elsewhere.example',
      'https://elsewhere.example',
    ]);
  });
});

describe('429 Too many requests. Try again later.', () => {
  it('limits one client (IP + token), with CORS headers and Retry-After, while other tokens go on', async () => {
    const limited = await startTestService({ RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' });
    try {
      const first = await limited.createApp('limited_app');
      const second = await limited.createApp('other_limited_app');
      const statuses: number[] = [];
      let last: Awaited<ReturnType<typeof postEvents>> | undefined;
      for (let i = 0; i < 5; i++) {
        last = await postEvents(limited.url, makeEvent('limited_app'), { token: first });
        statuses.push(last.status);
      }
      expect(statuses).toEqual([201, 201, 201, 429, 429]);
      expect(last!.text).toBe('{"message":"Too many requests. Try again later."}');
      expect(last!.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
      expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await postEvents(limited.url, makeEvent('other_limited_app'), { token: second })).status).toBe(201);
    } finally {
      await limited.close();
    }
  });
});

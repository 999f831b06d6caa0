// A generated corpus of hostile requests to POST /events (and around it), each with the answers it may
// get. Deterministic (seeded), so a failure names a case that can be replayed. Large payloads are
// shared buffers, so the corpus itself stays small in memory.
import crypto from 'node:crypto';
import zlib from 'node:zlib';
import { seededRandom } from '../helpers/load.ts';

export interface HostileCase {
  id: number;
  category: string;
  /** one line saying what the case is, for failure messages */
  label: string;
  method: string;
  path: string;
  /** sent as is, in this order (names and values are not checked by the client) */
  headers: [string, string][];
  body?: Buffer;
  /** send the body with Transfer-Encoding: chunked in pieces of this size */
  chunked?: number;
  /** send head and body in pieces of `bytes` every `everyMs` (a slow client) */
  trickle?: { bytes: number; everyMs: number };
  /** the complete request bytes, head included (protocol abuse); replaces method/path/headers/body */
  raw?: Buffer;
  /** the client gives up after sending this many bytes and closes (no answer expected) */
  abandonAfterBytes?: number;
  /** statuses the service may answer; empty: the client leaves early, so no answer or any 4xx */
  expect: number[];
  /** the answer must be a JSON object with a string "message" (answers made by the service, not by Node's HTTP parser) */
  jsonMessage?: boolean;
}

export interface CorpusOptions {
  appName: string;
  token: string;
  origin: string;
  seed?: number;
  /** how many cases in total (at least) */
  size?: number;
  maxBodyBytes?: number;
}

const VALIDATION = [400];
const ACCEPTED_OR_REFUSED = [201, 400];

function validEvent(
  appName: string,
  random: () => number,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    event_name: 'custom-event',
    session_id: crypto.randomUUID(),
    user_id: 1_000 + Math.floor(random() * 1_000_000),
    app_name: appName,
    is_premium: random() < 0.5,
    platform: 'tdesktop',
    locale: 'en',
    start_param: '',
    client_timestamp: String(Date.now()),
    ...overrides,
  };
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

/** nested arrays/objects `depth` deep, built as text (no recursion, no giant object in memory) */
function deepText(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

/** `size` bytes of '0' compressed: decodes to one enormous JSON-looking number */
function bombOf(size: number, format: 'gzip' | 'deflate' | 'br'): Buffer {
  const plain = Buffer.alloc(size, 0x30);
  if (format === 'gzip') return zlib.gzipSync(plain, { level: 9 });
  if (format === 'deflate') return zlib.deflateSync(plain, { level: 9 });
  return zlib.brotliCompressSync(plain, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4 } });
}

export function buildCorpus(options: CorpusOptions): HostileCase[] {
  const { appName, token, origin } = options;
  const random = seededRandom(options.seed ?? 20_261_122);
  const size = options.size ?? 10_000;
  const maxBody = options.maxBodyBytes ?? 1_048_576;
  const cases: HostileCase[] = [];
  const base = (): [string, string][] => [
    ['Content-Type', 'application/json'],
    ['TGA-Auth-Token', token],
    ['Origin', origin],
  ];
  const add = (
    c: Omit<HostileCase, 'id' | 'method' | 'path' | 'headers'> &
      Partial<Pick<HostileCase, 'method' | 'path' | 'headers'>>,
  ) => {
    cases.push({ id: cases.length, method: 'POST', path: '/events', headers: base(), jsonMessage: true, ...c });
  };
  const event = (overrides: Record<string, unknown> = {}) => validEvent(appName, random, overrides);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

  // ---- shared large payloads (built once) ----
  const tenMiB = Buffer.alloc(10 * 1024 * 1024, 0x20); // spaces: JSON whitespace all the way
  tenMiB.write('[', 0);
  const bombGzip10M = bombOf(10 * 1024 * 1024, 'gzip');
  const bombGzip64M = bombOf(64 * 1024 * 1024, 'gzip');
  const bombDeflate = bombOf(32 * 1024 * 1024, 'deflate');
  const bombBrotli = bombOf(64 * 1024 * 1024, 'br');
  const bombJsonInside = zlib.gzipSync(
    Buffer.from(JSON.stringify([event({ custom_data: { pad: 'x'.repeat(maxBody + 10) } })])),
  );
  const nestedGzip = zlib.gzipSync(zlib.gzipSync(json(event())));

  // ---- fixed cases: every kind at least a few times ----
  for (let i = 0; i < 6; i++) {
    add({ category: '10MB body', label: '10 MiB of JSON whitespace with Content-Length', body: tenMiB, expect: [413] });
    add({
      category: '10MB body',
      label: '10 MiB of JSON whitespace, chunked (no Content-Length)',
      body: tenMiB,
      chunked: 64 * 1024,
      expect: [413],
    });
  }
  for (let i = 0; i < 5; i++) {
    const gz = [['Content-Encoding', 'gzip']] as [string, string][];
    add({
      category: 'gzip bomb',
      label: 'gzip of 10 MiB of zeros',
      headers: [...base(), ...gz],
      body: bombGzip10M,
      expect: [413],
    });
    add({
      category: 'gzip bomb',
      label: 'gzip of 64 MiB of zeros',
      headers: [...base(), ...gz],
      body: bombGzip64M,
      expect: [413],
    });
    add({
      category: 'gzip bomb',
      label: 'deflate of 32 MiB of zeros',
      headers: [...base(), ['Content-Encoding', 'deflate']],
      body: bombDeflate,
      expect: [413],
    });
    add({
      category: 'gzip bomb',
      label: 'brotli of 64 MiB of zeros',
      headers: [...base(), ['Content-Encoding', 'br']],
      body: bombBrotli,
      expect: [413],
    });
    add({
      category: 'gzip bomb',
      label: 'gzip of a valid event padded past the limit',
      headers: [...base(), ...gz],
      body: bombJsonInside,
      expect: [413],
    });
    add({
      category: 'gzip bomb',
      label: 'gzip inside gzip',
      headers: [...base(), ...gz],
      body: nestedGzip,
      expect: VALIDATION,
    });
    add({
      category: 'gzip bomb',
      label: 'gzip declared, chunked body of a bomb',
      headers: [...base(), ...gz],
      body: bombGzip10M,
      chunked: 997,
      expect: [413],
    });
  }

  // slow bodies: trickled and completed (answered normally), and abandoned half-way (no answer)
  for (let i = 0; i < 12; i++) {
    add({
      category: 'slow body',
      label: 'valid event trickled 7 bytes every 40 ms',
      body: json(event({ custom_data: { slow: i } })),
      trickle: { bytes: 7, everyMs: 40 },
      expect: [201],
    });
    add({
      category: 'slow body',
      label: 'invalid JSON trickled 5 bytes every 50 ms',
      body: Buffer.from('{"event_name": "custom-event", "user_id": 1, "broken'),
      trickle: { bytes: 5, everyMs: 50 },
      expect: VALIDATION,
    });
    add({
      category: 'slow body',
      label: 'body abandoned after half of its Content-Length, slowly',
      body: json(event()),
      trickle: { bytes: 3, everyMs: 30 },
      abandonAfterBytes: 120,
      expect: [],
    });
  }

  // header abuse and protocol-level garbage (answered by Node's HTTP parser or Fastify)
  const headerCases: [string, () => Partial<HostileCase>, number[], boolean][] = [
    ['32 KiB header value', () => ({ headers: [...base(), ['X-Pad', 'a'.repeat(32 * 1024)]] }), [431], false],
    [
      '5000 small headers',
      () => ({ headers: [...base(), ...Array.from({ length: 5000 }, (_, i) => [`X-H${i}`, 'v'] as [string, string])] }),
      [431],
      false,
    ],
    ['URL with a 20 KiB query', () => ({ path: `/events?q=${'q'.repeat(20 * 1024)}` }), [431], false],
    [
      'token of 10 KiB',
      () => ({
        headers: [
          ['Content-Type', 'application/json'],
          ['TGA-Auth-Token', 't'.repeat(10 * 1024)],
          ['Origin', origin],
        ],
        body: json(event()),
      }),
      [400],
      true,
    ],
    [
      'token with spaces inside',
      () => ({
        headers: [
          ['Content-Type', 'application/json'],
          ['TGA-Auth-Token', 'tma_ abc def'],
          ['Origin', origin],
        ],
        body: json(event()),
      }),
      [400],
      true,
    ],
    [
      'token of latin-1 bytes',
      () => ({
        headers: [
          ['Content-Type', 'application/json'],
          ['TGA-Auth-Token', 'tma_\u00e9\u00e8\u00ff\u00fe'],
          ['Origin', origin],
        ],
        body: json(event()),
      }),
      [400],
      true,
    ],
    [
      'token never issued',
      () => ({
        headers: [
          ['Content-Type', 'application/json'],
          ['TGA-Auth-Token', 'tma_' + 'A'.repeat(40)],
          ['Origin', origin],
        ],
        body: json(event()),
      }),
      [400],
      true,
    ],
    [
      'no token',
      () => ({
        headers: [
          ['Content-Type', 'application/json'],
          ['Origin', origin],
        ],
        body: json(event()),
      }),
      [400],
      true,
    ],
    [
      'two different token headers',
      () => ({ headers: [...base(), ['ANALYTICS-Auth-Token', 'tma_' + 'B'.repeat(40)]], body: json(event()) }),
      [400],
      true,
    ],
    [
      'token header twice',
      () => ({ headers: [...base(), ['TGA-Auth-Token', token]], body: json(event()) }),
      [400, 201],
      true,
    ],
    [
      'origin "null"',
      () => ({
        headers: [
          ['Content-Type', 'application/json'],
          ['TGA-Auth-Token', token],
          ['Origin', 'null'],
        ],
        body: json(event()),
      }),
      [403],
      true,
    ],
    [
      'origin of another site',
      () => ({
        headers: [
          ['Content-Type', 'application/json'],
          ['TGA-Auth-Token', token],
          ['Origin', 'https://evil.example'],
        ],
        body: json(event()),
      }),
      [403],
      true,
    ],
    [
      'origin of 8 KiB garbage',
      () => ({
        headers: [
          ['Content-Type', 'application/json'],
          ['TGA-Auth-Token', token],
          ['Origin', 'h'.repeat(8 * 1024)],
        ],
        body: json(event()),
      }),
      [403],
      true,
    ],
    [
      'referer javascript: URL, no origin',
      () => ({
        headers: [
          ['Content-Type', 'application/json'],
          ['TGA-Auth-Token', token],
          ['Referer', 'javascript:alert(1)'],
        ],
        body: json(event()),
      }),
      [403],
      true,
    ],
    [
      'Content-Length larger than the body, then the client leaves',
      () => {
        const raw = rawRequest('POST', '/events', [...base(), ['Content-Length', '500']], '{"a":1}', false);
        return { raw, abandonAfterBytes: raw.length - 1 };
      },
      [],
      false,
    ],
    [
      'Content-Length not a number',
      () => ({ raw: rawRequest('POST', '/events', [...base(), ['Content-Length', 'abc']], '{}', false) }),
      [400],
      false,
    ],
    [
      'two different Content-Lengths',
      () => ({
        raw: rawRequest('POST', '/events', [...base(), ['Content-Length', '2'], ['Content-Length', '3']], '{}', false),
      }),
      [400],
      false,
    ],
    [
      'Content-Length and chunked together',
      () => ({
        raw: rawRequest(
          'POST',
          '/events',
          [...base(), ['Content-Length', '2'], ['Transfer-Encoding', 'chunked']],
          '2\r\n{}\r\n0\r\n\r\n',
          false,
        ),
      }),
      [400],
      false,
    ],
    [
      'chunk size not hex',
      () => ({
        raw: rawRequest(
          'POST',
          '/events',
          [...base(), ['Transfer-Encoding', 'chunked']],
          'zz\r\n{}\r\n0\r\n\r\n',
          false,
        ),
      }),
      [400],
      false,
    ],
    [
      'Transfer-Encoding chunked, gzip (chunked not last)',
      () => ({
        raw: rawRequest(
          'POST',
          '/events',
          [...base(), ['Transfer-Encoding', 'chunked, gzip']],
          '2\r\n{}\r\n0\r\n\r\n',
          false,
        ),
      }),
      [400],
      false,
    ],
    [
      'header name with a space',
      () => ({
        raw: rawRequest('POST', '/events', [...base(), ['Bad Header', 'x'], ['Content-Length', '2']], '{}', false),
      }),
      [400],
      false,
    ],
    [
      'header value with a raw control byte',
      () => ({
        raw: rawRequest('POST', '/events', [...base(), ['X-Ctl', 'a\u0001b'], ['Content-Length', '2']], '{}', false),
      }),
      [400],
      false,
    ],
    [
      'NUL in the request line',
      () => ({ raw: Buffer.from('POST /ev\u0000ents HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n', 'latin1') }),
      [400],
      false,
    ],
    ['not HTTP at all', () => ({ raw: crypto.randomBytes(512) }), [400], false],
    ['HTTP/0.9 style request', () => ({ raw: Buffer.from('GET /events\r\n\r\n') }), [400, 404], false],
    [
      'HTTP/2 preface on an HTTP/1.1 port',
      () => ({ raw: Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n') }),
      [400, 404, 505],
      false,
    ],
    [
      'no Host header',
      () => ({
        raw: Buffer.from(
          'POST /events HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
        ),
      }),
      [400],
      false,
    ],
    [
      'Expect: something unknown',
      () => ({ headers: [...base(), ['Expect', 'teapot']], body: json(event()) }),
      [417],
      false,
    ],
    [
      'Expect: 100-continue',
      () => ({ headers: [...base(), ['Expect', '100-continue']], body: json(event()) }),
      [201],
      true,
    ],
  ];
  for (let round = 0; round < 8; round++) {
    for (const [label, build, expect, jsonMessage] of headerCases)
      add({ category: 'header abuse', label, expect, jsonMessage, ...build() });
  }

  // wrong methods and paths
  const routeCases: [string, string, number[]][] = [
    ['PUT', '/events', [404]],
    ['DELETE', '/events', [404]],
    ['PATCH', '/events', [404]],
    ['POST', '/EVENTS', [404]],
    ['POST', '/events/../../etc/passwd', [404]],
    ['POST', '/events%00', [404, 400]],
    ['POST', '//events', [404]],
    ['POST', '/events/fingerprint', [404, 400, 201]],
    ['GET', '/events?' + '&a=1'.repeat(500), [404, 200, 400]],
  ];
  for (let round = 0; round < 10; round++) {
    for (const [method, path, expect] of routeCases)
      add({
        category: 'method or path',
        label: `${method} ${path.slice(0, 40)}`,
        method,
        path,
        body: json(event()),
        expect,
        jsonMessage: !expect.includes(200),
      });
  }

  // wrong content types (answered 415, or accepted when the type is JSON spelt oddly)
  const types: [string, number[]][] = [
    ['text/plain', [415]],
    ['application/x-www-form-urlencoded', [415]],
    ['multipart/form-data; boundary=x', [415]],
    ['application/xml', [415]],
    ['application/jsonp', [415]],
    ['application/json-patch+json', [415]],
    ['', [415]],
    ['*/*', [415]],
    ['application/json; charset=utf-16', [201, 400, 415]],
    ['APPLICATION/JSON', [201, 415]],
    ['application/json;charset=utf-8', [201]],
    ['application/json, text/plain', [201, 415, 400]],
  ];

  // ---- the generated bulk: random mutations until the corpus has `size` cases ----
  const unicodeStrings = [
    'a\u0000b',
    '\u0000',
    'x\ud800y',
    '\udfff',
    '\ud83d',
    '🚀🔥👨‍👩‍👧',
    '\u202eevil\u202c',
    '\u200b\u200c\u200d',
    'Ω≈ç√∫',
    '\ufeffbom',
    'नमस्ते',
    '中文字符',
    '\u0001\u0002\u001f',
    '\\u0000',
    '"\'\\/<script>',
    '\r\n\t',
  ];
  /** a generator that makes at most `max` cases (heavy payloads stay a handful) */
  const capped = (max: number, generate: () => void) => {
    let made = 0;
    return () => {
      if (made++ < max) generate();
    };
  };
  const generators: (() => void)[] = [
    // invalid JSON: truncations and garbage
    () => {
      const text = JSON.stringify([event(), event()]);
      add({
        category: 'invalid JSON',
        label: 'truncated JSON',
        body: Buffer.from(text.slice(0, 1 + Math.floor(random() * (text.length - 2)))),
        expect: VALIDATION,
      });
    },
    () =>
      add({
        category: 'invalid JSON',
        label: 'random bytes',
        body: crypto.randomBytes(1 + Math.floor(random() * 4096)),
        expect: VALIDATION,
      }),
    () =>
      add({
        category: 'invalid JSON',
        label: 'JSON with a trailing comma / comments / NaN',
        body: Buffer.from(
          pick([
            '[{"a":1},]',
            '{"a":1 /* c */}',
            '{"a":NaN}',
            "{'a':1}",
            '{"a":01}',
            '{"a":1}{"b":2}',
            '',
            ' ',
            'null',
            'true',
            '"event"',
            '12345',
            '[]',
            '{}',
            '[[]]',
            '[null]',
            '[1,2,3]',
          ]),
        ),
        expect: VALIDATION,
      }),
    () =>
      add({
        category: 'invalid JSON',
        label: 'invalid UTF-8 bytes in a string',
        body: Buffer.concat([
          Buffer.from('{"event_name":"custom-event","x":"'),
          Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xa0, 0xa1]),
          Buffer.from('"}'),
        ]),
        expect: VALIDATION,
      }),
    // deep nesting, as the whole body and inside an event
    capped(20, () => {
      const depth = pick([1_000, 10_000, 100_000, 400_000]);
      add({
        category: 'deep nesting',
        label: `array ${depth} deep`,
        body: Buffer.from(deepText(depth, 'array')),
        expect: [400, 413],
      });
    }),
    capped(30, () => {
      const depth = pick([17, 50, 1_000, 50_000]);
      const text = JSON.stringify(event({ custom_data: { placeholder: 0 } })).replace(
        '{"placeholder":0}',
        deepText(depth, 'object'),
      );
      add({
        category: 'deep nesting',
        label: `custom_data ${depth} deep`,
        body: Buffer.from(text),
        expect: VALIDATION,
      });
    }),
    () => {
      const text = JSON.stringify(event({ custom_data: { placeholder: 0 } })).replace(
        '{"placeholder":0}',
        deepText(15, 'object'),
      );
      add({ category: 'deep nesting', label: 'custom_data 16 deep (allowed)', body: Buffer.from(text), expect: [201] });
    },
    // huge strings and many keys within the body limit
    capped(15, () => {
      const field = pick([
        'start_param',
        'error_message',
        'platform',
        'locale',
        'wallet_address',
        'url_referer',
        'event_name',
        'session_id',
        'app_name',
      ]);
      add({
        category: 'huge strings',
        label: `${field} of 600 KB`,
        body: json(event({ [field]: 'z'.repeat(600_000) })),
        expect: VALIDATION,
      });
    }),
    capped(8, () =>
      add({
        category: 'huge strings',
        label: 'custom_data string of 400 KB (valid)',
        body: json(event({ custom_data: { note: 'n'.repeat(400_000) } })),
        expect: [201],
      }),
    ),
    capped(8, () =>
      add({
        category: 'huge strings',
        label: 'custom_data key of 100 KB (valid)',
        body: json(event({ custom_data: { ['k'.repeat(100_000)]: 1 } })),
        expect: [201],
      }),
    ),
    capped(10, () =>
      add({
        category: 'huge strings',
        label: 'body just over the limit',
        body: json(event({ custom_data: { pad: 'p'.repeat(maxBody) } })),
        expect: [413],
      }),
    ),
    capped(5, () =>
      add({
        category: 'huge strings',
        label: '20,000 keys in custom_data',
        body: json(event({ custom_data: Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i])) })),
        expect: [201],
      }),
    ),
    capped(5, () =>
      add({
        category: 'huge strings',
        label: '200,000 events in one array',
        body: Buffer.from('[' + Array(200_000).fill('{}').join(',') + ']'),
        expect: VALIDATION,
      }),
    ),
    capped(10, () =>
      add({
        category: 'huge strings',
        label: '101 valid events (one over the cap)',
        body: json(Array.from({ length: 101 }, () => event())),
        expect: VALIDATION,
      }),
    ),
    capped(10, () =>
      add({
        category: 'huge strings',
        label: '100 valid events (the cap)',
        body: json(Array.from({ length: 100 }, () => event())),
        expect: [201],
      }),
    ),
    capped(10, () =>
      add({
        category: 'huge strings',
        label: '99 valid events and one invalid',
        body: json([...Array.from({ length: 99 }, () => event()), event({ user_id: 'x' })]),
        expect: VALIDATION,
      }),
    ),
    // unicode: NUL, lone surrogates, odd but valid text anywhere a string goes
    () => {
      const text = pick(unicodeStrings);
      const where = pick(['value', 'key', 'platform', 'start_param', 'nested']);
      const overrides =
        where === 'value'
          ? { custom_data: { text } }
          : where === 'key'
            ? { custom_data: { [text]: 1 } }
            : where === 'nested'
              ? { custom_data: { a: [{ [text]: [text] }] } }
              : { [where]: text };
      add({
        category: 'unicode',
        label: `${JSON.stringify(text)} as ${where}`,
        body: json(event(overrides)),
        expect: [201],
      });
    },
    () =>
      add({
        category: 'unicode',
        label: "unicode app_name (not the token's)",
        body: json(event({ app_name: 'bench_\u0000app' })),
        expect: VALIDATION,
      }),
    () =>
      add({
        category: 'unicode',
        label: 'session_id with unicode digits',
        body: json(event({ session_id: '٠a927a1d-6036-4e04-9d40-26e041d4026e' })),
        expect: VALIDATION,
      }),
    // prototype pollution and other odd keys
    () => {
      const text = pick([
        `{"__proto__":{"polluted":1},${JSON.stringify(event()).slice(1)}`,
        `[${JSON.stringify(event()).slice(0, -1)},"custom_data":{"__proto__":{"polluted":1}}}]`,
        `${JSON.stringify(event()).slice(0, -1)},"constructor":{"prototype":{"polluted":1}}}`,
        `${JSON.stringify(event()).slice(0, -1)},"custom_data":{"\\u005f_proto__":{"x":1}}}`,
      ]);
      add({ category: '__proto__', label: 'prototype-polluting key', body: Buffer.from(text), expect: VALIDATION });
    },
    () =>
      add({
        category: '__proto__',
        label: 'harmless "constructor" and "prototype" keys',
        body: json(event({ custom_data: { constructor: 'x', prototype: 1, toString: 2, hasOwnProperty: 3 } })),
        expect: [201],
      }),
    // types: numbers at the edges, wrong types everywhere
    () => {
      const [value, expect] = pick<[unknown, number[]]>([
        [1e308, VALIDATION],
        [-1, VALIDATION],
        [0, VALIDATION],
        [-0, VALIDATION],
        [2 ** 53, VALIDATION],
        [1.5, VALIDATION],
        [1.2345678901234568e29, VALIDATION],
        [1, [201]],
        [2 ** 53 - 1, [201]],
        ['"18446744073709551615"', VALIDATION],
        ['"279058397"', VALIDATION],
        ['"0123"', VALIDATION],
      ]);
      add({
        category: 'types',
        label: `user_id ${value}`,
        body: Buffer.from(JSON.stringify(event()).replace(/"user_id":\d+/, `"user_id":${value}`)),
        expect,
      });
    },
    () => {
      const text = JSON.stringify(event()).replace(/"user_id":\d+/, `"user_id":${pick(['1e999', '-1e999'])}`);
      add({
        category: 'types',
        label: 'user_id that JSON parses to Infinity',
        body: Buffer.from(text),
        expect: ACCEPTED_OR_REFUSED,
      });
    },
    () => {
      const field = pick([
        'user_id',
        'event_name',
        'session_id',
        'app_name',
        'is_premium',
        'custom_data',
        'messages',
        'auth_type',
        'error_code',
        'client_timestamp',
      ]);
      const value = pick([[], {}, 'str', 123, true, [1, 2], { a: 1 }]);
      add({
        category: 'types',
        label: `${field} = ${JSON.stringify(value)}`,
        body: json(event({ [field]: value })),
        expect: ACCEPTED_OR_REFUSED,
      });
    },
    () =>
      add({
        category: 'types',
        label: 'client_timestamp far future / far past / not a time',
        body: json(
          event({ client_timestamp: pick(['99999999999999999999', '0', '-5', 'yesterday', '2026-13-45', '1e21']) }),
        ),
        expect: [201],
      }),
    capped(20, () =>
      add({
        category: 'types',
        label: '257 messages',
        body: json(
          event({
            event_name: 'transaction-signed',
            messages: Array.from({ length: 257 }, () => ({ address: '0:a', amount: '1' })),
          }),
        ),
        expect: VALIDATION,
      }),
    ),
    // wrong content types
    () => {
      const [type, expect] = pick(types);
      const headers: [string, string][] = [
        ['TGA-Auth-Token', token],
        ['Origin', origin],
      ];
      if (type !== '') headers.push(['Content-Type', type]);
      add({
        category: 'content type',
        label: `Content-Type ${JSON.stringify(type)}`,
        headers,
        body: json(event()),
        expect,
      });
    },
    () =>
      add({
        category: 'content type',
        label: 'unsupported Content-Encoding',
        headers: [
          ...base(),
          ['Content-Encoding', pick(['compress', 'zstd', 'gzip, gzip', 'identity;q=0', 'x-unknown'])],
        ],
        body: json(event()),
        expect: [415, 400],
      }),
    () =>
      add({
        category: 'content type',
        label: 'gzip declared, plain body',
        headers: [...base(), ['Content-Encoding', 'gzip']],
        body: json(event()),
        expect: VALIDATION,
      }),
    () =>
      add({
        category: 'content type',
        label: 'truncated gzip',
        headers: [...base(), ['Content-Encoding', 'gzip']],
        body: zlib.gzipSync(json([event(), event()])).subarray(0, 20),
        expect: VALIDATION,
      }),
    () =>
      add({
        category: 'content type',
        label: 'gzip with a trailing garbage',
        headers: [...base(), ['Content-Encoding', 'gzip']],
        body: Buffer.concat([zlib.gzipSync(json(event())), Buffer.from('garbage')]),
        expect: [201, 400],
      }),
    () =>
      add({
        category: 'content type',
        label: 'two gzip members',
        headers: [...base(), ['Content-Encoding', 'gzip']],
        body: Buffer.concat([
          zlib.gzipSync('[' + JSON.stringify(event())),
          zlib.gzipSync(',' + JSON.stringify(event()) + ']'),
        ]),
        expect: [201, 400],
      }),
    // authorisation mismatches mixed into the bulk
    () =>
      add({
        category: 'authorisation',
        label: 'app_name of another app',
        body: json(event({ app_name: 'someone_else' })),
        expect: [400],
      }),
    () =>
      add({
        category: 'authorisation',
        label: 'valid event from a wrong origin',
        headers: [
          ['Content-Type', 'application/json'],
          ['TGA-Auth-Token', token],
          ['Origin', `https://x${Math.floor(random() * 1e6)}.example`],
        ],
        body: json(event()),
        expect: [403],
      }),
  ];
  while (cases.length < size) pick(generators)();
  return cases;
}

/** the bytes of a request exactly as given (no header added except Host and Connection: close) */
export function rawRequest(
  method: string,
  path: string,
  headers: [string, string][],
  body: string,
  addLength = true,
): Buffer {
  const lines = [
    `${method} ${path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Connection: close',
    ...headers.map(([name, value]) => `${name}: ${value}`),
  ];
  if (addLength) lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  return Buffer.from(lines.join('\r\n') + '\r\n\r\n' + body, 'latin1');
}

// Every route of the whole service, read from Fastify's own route table (a new route is walked without
// touching this file), called with hostile parameters: repeated query keys, NUL bytes, huge values, bad
// percent-encoding, arrays where text is expected, unicode, hostile JSON bodies; signed out and signed in
// as an administrator, with a read key. Hostile queries go to an app that exists (its public link and read key
// too), so they reach the reads behind the checks. No answer may be a 5xx and no error may be logged.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../src/tokens/registry.ts';
import type { TestService } from '../helpers/service.ts';
import { SiteClient, startSiteService, type TelegramUser } from '../site/site-harness.ts';

const ADMIN: TelegramUser = { id: 9019, first_name: 'Root' };

let service: TestService;
let admin: SiteClient;
/** path parameters naming what exists: queries reach the reads of a real app */
const EXISTING: Record<string, string> = {
  name: 'walk_app',
  app: 'walk_app',
  format: 'csv',
  event: 'tap',
  property: 'sku',
  version: '0',
};
let readKey: string;
/** log lines at error level or above (pino: error 50, fatal 60) written while the walk ran */
const errorLines: string[] = [];

/** the stream a pino logger writes to: a child finds it on the logger it was made from */
function pinoStream(logger: object): { write(line: string): boolean } {
  for (let at: object | null = logger; at; at = Object.getPrototypeOf(at)) {
    const key = Object.getOwnPropertySymbols(at).find((symbol) => symbol.description === 'pino.stream');
    if (key) return (at as Record<symbol, { write(line: string): boolean }>)[key]!;
  }
  throw new Error('not a pino logger');
}

beforeAll(async () => {
  service = await startSiteService({
    LOG_LEVEL: 'warn',
    ADMIN_TELEGRAM_IDS: String(ADMIN.id),
    RATE_LIMIT_MAX: '1000000',
    // the walk is about input, not load: on a machine busy with other suites an app's insights may outrun the
    // default read budget and be shed with 503 "busy", which the load tests cover
    READ_BUDGET_MS: '120000',
  });
  // every logger of the service (the app's and the requests' are children) writes to this one stream
  const stream = pinoStream(service.app.log);
  stream.write = (line: string) => {
    if ((JSON.parse(line) as { level: number }).level >= 50) errorLines.push(line);
    return true;
  };
  admin = await SiteClient.signedIn(service.url, ADMIN);
  await service.createApp('walk_app', 'walk.example.com');
  ({ key: readKey } = await service.services.readKeys.create('walk_app', OPERATOR));
  EXISTING.secret = (await service.services.shareLinks.create('walk_app', OPERATOR)).secret;
});
afterAll(() => service?.close());

interface Route {
  path: string;
  methods: string[];
}

/** the route table as Fastify prints it: one node per line, a child's segment appended to its parent's path */
function routesOf(tree: string): Route[] {
  const routes: Route[] = [];
  const parents: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^((?:│ {3}| {4})*)(?:├── |└── )(.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    const path = (parents[depth - 1] ?? '') + match[2];
    parents[depth] = path;
    parents.length = depth + 1;
    if (match[3]) routes.push({ path, methods: match[3].split(', ') });
  }
  return routes;
}

const HUGE = 'x'.repeat(6000);
/** path parameter values, as they appear in the URL */
const PARAM_VALUES = [
  'no_such_app',
  '%00',
  'walk_app%00',
  'a%00b',
  HUGE,
  '%E0%A4%A',
  '%ZZ',
  '%F0%9F%92%A9',
  '..%2F..%2Fetc%2Fpasswd',
  '%3Cscript%3E',
  'walk_app%0D%0ASet-Cookie:x=1',
  '%C0%AF',
];
/** query strings, each hostile in one way */
const QUERIES = (keys: string[]) => [
  ...keys.map((key) => `${key}=a&${key}=b`),
  ...keys.map((key) => `${key}=%00`),
  ...keys.map((key) => `${key}=${HUGE}`),
  ...keys.map((key) => `${key}=%E0%A4%A`),
  ...keys.map((key) => `${key}[]=1&${key}[0]=2`),
  ...keys.map((key) => `${key}=%F0%9F%92%A9%E2%80%AE`),
  ...keys.map((key) => `${key}`),
  `${HUGE}=1`,
  '%00=%00',
  '&&&=&',
];
/** every query key a route of the service reads (the dashboard's and read API's among them), and the Login Widget's fields */
const QUERY_KEYS = [
  'token',
  'next',
  'days',
  'all',
  'state',
  'id',
  'hash',
  'auth_date',
  'from',
  'to',
  'platform',
  'language',
  'premium',
  'campaign',
  'steps',
  'by',
  'window',
];
/** JSON bodies for the routes that take one */
const BODIES: unknown[] = [
  {},
  [],
  null,
  'text',
  12,
  {
    bot: ['@a_bot', '@b_bot'],
    domain: { host: 'x' },
    app_name: 'walk\u0000app',
    add: ['x'],
    remove: 7,
    initData: ['a'],
    telegram_id: [1],
    days: ['90'],
    telegram_user_id: { id: 1 },
  },
  {
    bot: `@${HUGE}`,
    domain: `${HUGE}.com`,
    app_name: HUGE,
    add: '\u0000.example.com',
    remove: '%00',
    initData: HUGE,
    telegram_id: '1'.repeat(40),
    days: HUGE,
    telegram_user_id: '9'.repeat(40),
  },
  {
    bot: '@\ud800bot',
    domain: 'xn--\u202e.example',
    app_name: 'app\u202e',
    add: 'ünicode.example',
    initData: 'user=%7B%22id%22%3A1%7D&hash=00',
    telegram_id: '\u0000',
    days: '\u0000',
    telegram_user_id: '1\u202e',
  },
];

interface Call {
  method: string;
  url: string;
  body?: string;
}

function callsFor(route: Route): Call[] {
  const paths = route.path === '*' ? ['/%00', `/${HUGE}`, '/%E0%A4%A', '/api/apps/%00'] : [route.path];
  // each hostile path parameter alone; hostile queries and bodies on a well-formed path (an app that does not exist)
  const hostilePaths = paths.flatMap((path) =>
    path.includes(':') ? PARAM_VALUES.map((value) => path.replace(/:\w+/g, value)) : [path],
  );
  const base = paths[0]!.replace(/:\w+/g, 'no_such_app');
  // reads take hostile queries on what exists; writes on an app that does not (a DELETE must not remove walk_app)
  const existing = paths[0]!.replace(/:(\w+)/g, (_, name: string) => EXISTING[name] ?? 'no_such_app');
  const calls: Call[] = [];
  for (const method of route.methods) {
    for (const path of hostilePaths) calls.push({ method, url: path });
    if (method === 'HEAD') continue; // answered by the GET handler, walked below
    for (const query of QUERIES(QUERY_KEYS))
      calls.push({ method, url: `${method === 'GET' ? existing : base}?${query}` });
    if (method === 'POST' || method === 'DELETE')
      for (const body of BODIES) calls.push({ method, url: base, body: JSON.stringify(body) });
  }
  return calls;
}

async function send(client: SiteClient, call: Call): Promise<number> {
  const headers: Record<string, string> = { origin: service.url, authorization: `Bearer ${readKey}` };
  if (client.cookie) headers.cookie = `tma_session=${client.cookie}`;
  if (call.body !== undefined) headers['content-type'] = 'application/json';
  if (call.method === 'OPTIONS') headers['access-control-request-method'] = 'POST';
  const response = await fetch(service.url + call.url, {
    method: call.method,
    headers,
    body: call.body,
    redirect: 'manual',
  });
  await response.arrayBuffer();
  return response.status;
}

describe('every route with hostile parameters', () => {
  it("finds the service's routes in Fastify's table, the site's, the catalog's and the ingest API's among them", () => {
    const paths = routesOf(service.app.printRoutes({ commonPrefix: false })).map((route) => route.path);
    for (const path of [
      '/events',
      '/events/threshold',
      '/healthz',
      '/index.js',
      '/api/catalog',
      '/catalog',
      '/login/link',
      '/api/apps/:name',
      '/api/apps/:name/export.:format',
    ]) {
      expect(paths).toContain(path);
    }
    // the static files' wildcard (the printed table shows it without its prefix)
    expect(service.app.hasRoute({ method: 'GET', url: '/assets/*' })).toBe(true);
  });

  it('answers every call below 500 and logs no error, signed out and signed in', async () => {
    const routes = routesOf(service.app.printRoutes({ commonPrefix: false }));
    const all = routes.flatMap(callsFor);
    // a same-origin POST /logout really signs out: those go last
    const signOuts = all.filter((call) => call.method === 'POST' && call.url.startsWith('/logout'));
    const others = all.filter((call) => !signOuts.includes(call));
    const failures: string[] = [];
    /** a few calls at a time, as a handful of browsers would send them */
    const walk = async (client: SiteClient, calls: Call[]) => {
      let next = 0;
      const worker = async () => {
        while (next < calls.length) {
          const call = calls[next++]!;
          const status = await send(client, call);
          if (status >= 500)
            failures.push(
              `${status} ${call.method} ${call.url.slice(0, 120)}${call.body ? ` ${call.body.slice(0, 80)}` : ''}`,
            );
        }
      };
      await Promise.all(Array.from({ length: 6 }, worker));
    };
    await walk(new SiteClient(service.url), all);
    await walk(admin, others);
    // the walk really ran signed in: no call before the sign-outs ended the administrator's session
    expect((await admin.get('/api/me')).status).toBe(200);
    await walk(admin, signOuts);
    expect(all.length).toBeGreaterThan(2000);
    expect(failures).toEqual([]);
    expect(errorLines.map((line) => line.slice(0, 300))).toEqual([]);
  });
});

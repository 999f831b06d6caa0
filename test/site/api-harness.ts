// What the site API suites share: the service with an administrator and a public address behind a reverse
// proxy, on the embedded store or on PostgreSQL, three users signed in through the Login Widget, and the app look-up
// and creation their checks use.
import { expect } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import { expectProjectStore, SERVICE_BACKEND } from '../helpers/stores.ts';
import { SiteClient, startSiteService, type TelegramUser } from './site-harness.ts';

export const ALICE: TelegramUser = { id: 1001, first_name: 'Alice', last_name: 'Liddell', username: 'alice' };
export const BOB: TelegramUser = { id: 2002, first_name: 'Bob', username: 'bob' };
export const ADMIN: TelegramUser = { id: 9009, first_name: 'Ada', username: 'ada_admin' };
/** where users reach the site (through a reverse proxy); the tests talk to the service directly */
export const PUBLIC_URL = 'https://analytics.example.net';

export interface SiteApi {
  service: TestService;
  alice: SiteClient;
  bob: SiteClient;
  admin: SiteClient;
}

/** the service of the test file that started it (every test file runs in its own worker, with its own modules) */
let running: TestService | undefined;

/** the service with ADMIN as administrator and PUBLIC_URL set, and Alice, Bob and the administrator signed in */
export async function startSiteApi(): Promise<SiteApi> {
  // the project's store: the embedded one, or PostgreSQL in the project "postgres" (test/vitest.config.ts)
  const place = await SERVICE_BACKEND.open();
  const service = (running = await startSiteService({
    ...place.env,
    ADMIN_TELEGRAM_IDS: String(ADMIN.id),
    RATE_LIMIT_MAX: '100000',
    PUBLIC_URL,
  }));
  // the project's store, not a default: a suite meant for PostgreSQL never passes on the embedded store unseen
  expectProjectStore(service.store);
  const close = service.close;
  service.close = () => close().then(place.drop);
  const [alice, bob, admin] = await Promise.all(
    [ALICE, BOB, ADMIN].map((user) => SiteClient.signedIn(service.url, user)),
  );
  return { service, alice, bob, admin };
}

/** the app's row with its tokens, read from the store of the running service; null when there is none */
export async function appRow(appName: string) {
  if (!running) throw new Error('startSiteApi() has not run');
  return running.store.prisma.app.findUnique({ where: { appName }, include: { tokens: true } });
}

/** creates an app through the site and returns its token */
/** the domain create() registers for an app unless given one */
export const domainOf = (appName: string) => `${appName.replace(/_/g, '-')}.example.com`;

export async function create(client: SiteClient, appName: string, domain = domainOf(appName)): Promise<string> {
  const answer = await client.post('/api/apps', { bot: `@${appName}_bot`, domain, app_name: appName });
  expect(answer.status, answer.text).toBe(201);
  return answer.json.token;
}

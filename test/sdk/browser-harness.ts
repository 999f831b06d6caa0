// What the browser suites share: Debian Chromium through playwright-core (fail in CI when it is missing,
// skip elsewhere), a tiny HTTP server for mini app pages on http://localhost, Telegram launch parameters
// for the URL hash, and polling of the event plane with a deadline.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext } from 'playwright-core';
import { launchChromium } from '../helpers/chromium.ts';
import { startTestService, type TestService } from '../helpers/service.ts';

export { CHROMIUM_PATH, chromiumAvailable, launchChromium } from '../helpers/chromium.ts';

/** the unmodified official client (@telegram-apps/analytics 1.6.4, a dev dependency) and the host it loads from */
export const OFFICIAL_SCRIPT = 'node_modules/@telegram-apps/analytics/dist/index.js';
export const OFFICIAL_HOST = 'tganalytics.xyz';

/** fails a browser suite that would run (Chromium is there) when the official client is not installed */
export function requireOfficialScript(): void {
  if (!fs.existsSync(OFFICIAL_SCRIPT))
    throw new Error(`${OFFICIAL_SCRIPT} is missing: npm ci installs @telegram-apps/analytics 1.6.4`);
}

/** what a browser suite runs against: the service (rate limit out of the way), the page server, Chromium */
/**
 * A context's requests as a page of the official client makes them here: localhost and the service pass, the official
 * host's /index.js is its script from node_modules and every other path of it goes to the service; any other host is
 * out of reach (the wallets list, the official bundle's fingerprinting add-on).
 */
export async function routeOfficialHost(context: BrowserContext, serviceUrl: string): Promise<void> {
  const serviceHost = new URL(serviceUrl).host;
  await context.route('**/*', async (route) => {
    const target = new URL(route.request().url());
    if (target.hostname === 'localhost' || target.host === serviceHost) return route.fallback();
    if (target.hostname !== OFFICIAL_HOST) return route.abort();
    if (target.pathname === '/index.js')
      return route.fulfill({ contentType: 'application/javascript', body: fs.readFileSync(OFFICIAL_SCRIPT) });
    return route.fulfill({ response: await route.fetch({ url: serviceUrl + target.pathname + target.search }) });
  });
}

export interface BrowserSuite {
  service: TestService;
  pages: PageServer;
  browser: Browser;
}

export async function startBrowserSuite(): Promise<BrowserSuite> {
  const [service, pages, browser] = await Promise.all([
    startTestService({ RATE_LIMIT_MAX: '100000' }),
    startPageServer(),
    launchChromium(),
  ]);
  return { service, pages, browser };
}

/** closes what started (a suite that was skipped started nothing) */
export async function closeBrowserSuite(suite: Partial<BrowserSuite>): Promise<void> {
  await suite.browser?.close();
  await suite.pages?.close();
  await suite.service?.close();
}

export interface PageServer {
  /** e.g. http://localhost:43121 */
  origin: string;
  /** serves html at path (e.g. "/app-1"); returns its full URL */
  page(path: string, html: string): string;
  /** serves a file as JavaScript */
  script(path: string, file: string): string;
  close(): Promise<void>;
}

/** Mini app pages, reached by the browser as http://localhost:<port> (the app's registered domain is "localhost"). */
export async function startPageServer(): Promise<PageServer> {
  const routes = new Map<string, { type: string; body: () => Buffer | string }>();
  const server = http.createServer((request, response) => {
    const route = routes.get(new URL(request.url ?? '/', 'http://localhost').pathname);
    if (!route) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': route.type, 'cache-control': 'no-store' }).end(route.body());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://localhost:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    page(path, html) {
      routes.set(path, { type: 'text/html; charset=utf-8', body: () => html });
      return origin + path;
    },
    script(path, file) {
      routes.set(path, { type: 'application/javascript; charset=utf-8', body: () => fs.readFileSync(file) });
      return origin + path;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface TelegramUser {
  id: number;
  first_name: string;
  language_code?: string;
  is_premium?: boolean;
}

export interface LaunchOptions {
  user?: TelegramUser;
  platform?: string;
  version?: string;
  startParam?: string;
  /** the launch data as Telegram signed it (test/helpers/telegram-launch.ts); default: unsigned data of the user */
  initData?: string;
}

export const TEST_USER: TelegramUser = {
  id: 279058397,
  first_name: 'Vladislav',
  language_code: 'ru',
  is_premium: true,
};

/** The URL fragment Telegram opens a mini app with: tgWebAppData (init data with the user) and the other tgWebApp* parameters. */
export function launchHash(options: LaunchOptions = {}): string {
  const user = options.user ?? TEST_USER;
  const data = new URLSearchParams({
    query_id: 'AAHdF6IQAAAAAN0XohDhrOrc',
    user: JSON.stringify(user),
    auth_date: String(Math.floor(Date.now() / 1000)),
    signature: 'c2lnbmF0dXJl',
    hash: 'c501b71e775f74ce10e377dea85a7ea24ecd640b223ea86dfe453e0eaed2e2b2',
  });
  if (options.startParam) data.set('start_param', options.startParam);
  const params = new URLSearchParams({
    tgWebAppData: options.initData ?? data.toString(),
    tgWebAppVersion: options.version ?? '8.0',
    tgWebAppPlatform: options.platform ?? 'tdesktop',
    tgWebAppThemeParams: JSON.stringify({
      bg_color: '#17212b',
      text_color: '#f5f5f5',
      button_color: '#5288c1',
      button_text_color: '#ffffff',
    }),
  });
  if (options.startParam) params.set('tgWebAppStartParam', options.startParam);
  return '#' + params.toString();
}

export interface StoredEvent {
  event_name: string;
  session_id: string;
  platform: string | null;
  locale: string | null;
  start_param: string | null;
  is_premium: boolean;
  is_success: boolean;
  props: Record<string, unknown>;
  occurred_at: Date;
}

export async function storedEvents(service: TestService, appName: string): Promise<StoredEvent[]> {
  return service.store.sql.query<StoredEvent>(
    `SELECT e.event_name, e.session_id::text AS session_id, e.platform, e.locale, e.start_param, e.is_premium, e.is_success,
            e.props, e.occurred_at
       FROM events e JOIN apps a ON a.id = e.app_id
      WHERE a.app_name = $1
      ORDER BY e.occurred_at, e.received_at`,
    [appName],
  );
}

/** Polls the store until `done` holds for the app's events; fails with what was stored when the deadline passes. */
export async function waitForEvents(
  service: TestService,
  appName: string,
  done: (events: StoredEvent[]) => boolean,
  timeoutMs = 20_000,
): Promise<StoredEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await storedEvents(service, appName);
    if (done(events)) return events;
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms; stored: ${JSON.stringify(events.map((event) => [event.event_name, event.props.custom_data ?? null]))}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

export const count = (events: StoredEvent[], name: string) =>
  events.filter((event) => event.event_name === name).length;

/** custom events with custom_data.name === name */
export const customEvents = (events: StoredEvent[], name: string) =>
  events.filter(
    (event) =>
      event.event_name === 'custom-event' && (event.props.custom_data as { name?: unknown } | undefined)?.name === name,
  );

export const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

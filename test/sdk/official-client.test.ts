// The unmodified official @telegram-apps/analytics 1.6.4 script in Chromium, its traffic to the hard-coded
// https://tganalytics.xyz/ routed to our service: its gzip batches with TGA-Auth-Token are stored.
//
// Playwright answers CORS preflights of routed requests itself (never handing them to the route handler),
// so the browser's OPTIONS requests are recorded over CDP, and each one is replayed against our service
// to check that our answer would have let the browser go on.
import zlib from 'node:zlib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import {
  chromiumAvailable,
  closeBrowserSuite,
  count,
  launchHash,
  OFFICIAL_HOST,
  OFFICIAL_SCRIPT,
  requireOfficialScript,
  startBrowserSuite,
  waitForEvents,
  type PageServer,
} from './browser-harness.ts';

declare const window: any;
declare const document: any;

const enabled = chromiumAvailable();
if (enabled) requireOfficialScript();

let service: TestService;
let pages: PageServer;
let browser: Browser;

beforeAll(async () => {
  if (enabled) ({ service, pages, browser } = await startBrowserSuite());
});
afterAll(() => closeBrowserSuite({ service, pages, browser }));

interface RoutedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer | null;
  /** our service's answer; 0 while it is on its way */
  status: number;
}

// what telegram-web-app.js defines in a real client; 1.6.4 throws "Cannot read properties of undefined
// (reading 'WebView')" without it, and wraps Telegram.WebView.receiveEvent
const TELEGRAM_WEB_APP = `window.Telegram = {
  WebView: { isIframe: false, initParams: {}, postEvent() {}, receiveEvent() {}, onEvent() {}, offEvent() {} },
  WebApp: { initData: '', initDataUnsafe: {}, platform: 'tdesktop', version: '8.0', ready() {}, expand() {} },
};`;

describe.runIf(enabled)('official @telegram-apps/analytics 1.6.4 script routed to our service', () => {
  it('gets app-init, a TON Connect event and app-hide stored, sent gzip with TGA-Auth-Token after a CORS preflight', async ({
    expect,
  }) => {
    const appName = `official_${process.pid}`;
    const token = await service.createApp(appName, 'localhost');
    pages.script('/official/analytics.js', OFFICIAL_SCRIPT);
    const url = pages.page(
      '/official/index.html',
      `<!doctype html><html><head><meta charset="utf-8"><title>official</title>
<script>${TELEGRAM_WEB_APP}</script>
<script async src="/official/analytics.js" onload='telegramAnalytics.init(${JSON.stringify({ token, appName })})'></script>
</head><body>official client</body></html>`,
    );

    const context = await browser.newContext();
    try {
      const routed: RoutedRequest[] = [];
      const blocked: string[] = [];
      await context.route('**/*', async (route) => {
        const request = route.request();
        const target = new URL(request.url());
        if (target.hostname === 'localhost') return route.fallback();
        if (target.hostname !== OFFICIAL_HOST) {
          // the bundled fingerprinting add-on calls its own hosts: no internet here
          blocked.push(target.hostname);
          return route.abort();
        }
        const record: RoutedRequest = {
          method: request.method(),
          path: target.pathname,
          headers: request.headers(),
          body: request.postDataBuffer(),
          status: 0,
        };
        routed.push(record);
        const response = await route.fetch({ url: service.url + target.pathname + target.search });
        record.status = response.status();
        return route.fulfill({ response });
      });
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      const preflights: Record<string, string>[] = [];
      cdp.on('Network.requestWillBeSent', (event) => {
        if (event.request.method === 'OPTIONS' && new URL(event.request.url).hostname === OFFICIAL_HOST)
          preflights.push(event.request.headers);
      });
      await cdp.send('Network.enable');

      await page.goto(url + launchHash({ platform: 'tdesktop' }));
      await waitForEvents(service, appName, (events) => count(events, 'app-init') === 1, 30_000);
      await page.evaluate(() =>
        window.dispatchEvent(
          new window.CustomEvent('ton-connect-connection-completed', {
            detail: {
              type: 'connection-completed',
              is_success: true,
              trace_id: 'official-1',
              wallet_address: '0:9a1f0e8c3d3b3c1b9a3f2e8c7d6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b',
              wallet_type: 'tonkeeper',
              wallet_version: '4.1.0',
              auth_type: 'ton_proof',
              custom_data: {
                ton_connect_sdk_lib: '3.4.1',
                ton_connect_ui_lib: null,
                chain_id: '-239',
                provider: 'http',
              },
            },
          }),
        ),
      );
      await page.evaluate(() => {
        Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
        document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
      });
      const events = await waitForEvents(
        service,
        appName,
        (stored) => count(stored, 'connection-completed') === 1 && count(stored, 'app-hide') >= 1,
        30_000,
      );

      const init = events.find((event) => event.event_name === 'app-init')!;
      expect(init).toMatchObject({ platform: 'tdesktop', locale: 'ru', start_param: '', is_premium: true });
      expect(new Set(events.map((event) => event.session_id)).size).toBe(1);
      const completed = events.find((event) => event.event_name === 'connection-completed')!;
      expect(completed).toMatchObject({
        is_success: true,
        props: { auth_type: 1, wallet_type: 'tonkeeper', trace_id: 'official-1', custom_data: { chain_id: '-239' } },
      });

      const posts = routed.filter((request) => request.method === 'POST' && request.path === '/events');
      await expect.poll(() => posts.every((post) => post.status !== 0)).toBe(true);
      const sent: string[] = [];
      for (const post of posts) {
        expect(post.status).toBe(201);
        expect(post.headers['tga-auth-token']).toBe(token);
        expect(post.headers['content-encoding']).toBe('gzip');
        expect(post.body!.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
        const batch = JSON.parse(zlib.gunzipSync(post.body!).toString('utf8')) as Record<string, unknown>[];
        expect(Array.isArray(batch)).toBe(true);
        for (const event of batch) expect(event).toMatchObject({ app_name: appName, user_id: 279058397 });
        sent.push(...batch.map((event) => event.event_name as string));
      }
      expect(sent).toEqual(expect.arrayContaining(['app-init', 'connection-completed', 'app-hide']));

      // the browser asked before each POST; our service must give the answer it needs
      expect(preflights.length).toBeGreaterThanOrEqual(1);
      const preflight = preflights[0]!;
      expect(preflight['Access-Control-Request-Method']).toBe('POST');
      const asked = preflight['Access-Control-Request-Headers']!.split(',');
      expect(asked).toEqual(expect.arrayContaining(['content-encoding', 'content-type', 'tga-auth-token']));
      const answer = await fetch(`${service.url}/events`, {
        method: 'OPTIONS',
        headers: {
          origin: preflight.Origin!,
          'access-control-request-method': preflight['Access-Control-Request-Method']!,
          'access-control-request-headers': preflight['Access-Control-Request-Headers']!,
        },
      });
      expect(answer.status).toBeLessThan(300);
      expect(answer.headers.get('access-control-allow-origin')).toBe(pages.origin);
      expect(answer.headers.get('access-control-allow-methods')).toContain('POST');
      const allowed = answer.headers.get('access-control-allow-headers')!.toLowerCase().split(/,\s*/);
      expect(allowed).toEqual(expect.arrayContaining(asked));
    } finally {
      await context.unrouteAll({ behavior: 'ignoreErrors' });
      await context.close();
    }
  });
});

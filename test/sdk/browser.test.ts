// The SDK script in Debian Chromium against the real service: a mini app page on http://localhost with
// Telegram launch parameters loads {service}/index.js cross-origin and calls telegramAnalytics.init in
// onload; what it sends is read back from the event plane.
import type { Browser, BrowserContext, ConsoleMessage, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import {
  chromiumAvailable,
  closeBrowserSuite,
  count,
  customEvents,
  launchHash,
  startBrowserSuite,
  storedEvents,
  UUID_V4,
  waitForEvents,
  type PageServer,
} from './browser-harness.ts';

// inside page.evaluate: the browser's globals (the project's type checking has no DOM library)
declare const window: any;
declare const document: any;
declare const localStorage: any;

const enabled = chromiumAvailable();

let service: TestService;
let pages: PageServer;
let browser: Browser;
let appCounter = 0;

beforeAll(async () => {
  if (enabled) ({ service, pages, browser } = await startBrowserSuite());
});
afterAll(() => closeBrowserSuite({ service, pages, browser }));

interface MiniApp {
  appName: string;
  token: string;
  url: string;
  context: BrowserContext;
  page: Page;
  /** uncaught errors of the page */
  errors: Error[];
  console: ConsoleMessage[];
  /** POST /events requests the page made */
  posts: Request[];
}

interface MiniAppOptions {
  /** URL fragment; default: Telegram launch parameters */
  hash?: string;
  /** the options object passed to init, beyond token and appName; flushIntervalMs is 500 unless given */
  init?: Record<string, unknown>;
  /** script run in the page before anything else */
  before?: string;
  /** false: do not navigate yet */
  open?: boolean;
  /** the domain the app is registered with; default "localhost", where its pages are */
  domain?: string;
}

/** Registers an app on the domain "localhost", serves its page and opens it in a fresh browser context. */
async function openMiniApp(options: MiniAppOptions = {}): Promise<MiniApp> {
  const appName = `sdk_app_${process.pid}_${++appCounter}`;
  const token = await service.createApp(appName, options.domain ?? 'localhost');
  // a short flush interval keeps the suite quick; undefined values leave an option out
  const initOptions = JSON.stringify({ token, appName, flushIntervalMs: 500, ...options.init });
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${appName}</title>
${options.before ? `<script>${options.before}</script>` : ''}
<script async src="${service.url}/index.js" onload='telegramAnalytics.init(${initOptions})'></script>
</head><body><h1>Mini app</h1></body></html>`;
  const url = pages.page(`/${appName}/index.html`, html);
  const context = await browser.newContext();
  const page = await context.newPage();
  const app: MiniApp = { appName, token, url, context, page, errors: [], console: [], posts: [] };
  page.on('pageerror', (error) => app.errors.push(error));
  page.on('console', (message) => app.console.push(message));
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url() === `${service.url}/events`) app.posts.push(request);
  });
  if (options.open !== false) await page.goto(url + (options.hash ?? launchHash()));
  return app;
}

/** what the page's document reports as hidden, the way a WebView going to the background does */
async function setVisibility(page: Page, state: 'hidden' | 'visible'): Promise<void> {
  await page.evaluate((value) => {
    Object.defineProperty(document, 'visibilityState', { value, configurable: true });
    Object.defineProperty(document, 'hidden', { value: value === 'hidden', configurable: true });
    document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
  }, state);
}

const trackEvent = (page: Page, name: string, data?: Record<string, unknown>) =>
  page.evaluate(([eventName, eventData]) => window.telegramAnalytics.trackEvent(eventName, eventData), [
    name,
    data,
  ] as const);

// every test has its own app and browser context: they run side by side
describe.runIf(enabled)('SDK script in Chromium', { concurrent: true }, () => {
  it('sends app-init once per launch with the launch data; a reload keeps the session and a second init is harmless', async ({
    expect,
  }) => {
    // exactly what an integrator writes: init({ token, appName })
    const app = await openMiniApp({
      hash: launchHash({ platform: 'android', startParam: 'ref_42' }),
      init: { flushIntervalMs: undefined },
    });
    try {
      const [init] = await waitForEvents(service, app.appName, (events) => count(events, 'app-init') === 1);
      expect(init).toMatchObject({
        event_name: 'app-init',
        platform: 'android',
        locale: 'ru',
        start_param: 'ref_42',
        is_premium: true,
      });
      expect(init!.session_id).toMatch(UUID_V4);
      expect(init!.props.url_referer).toBe(app.url);

      await app.page.evaluate(
        ([token, appName]) => window.telegramAnalytics.init({ token, appName }),
        [app.token, app.appName],
      );
      await app.page.reload();
      await app.page.waitForFunction(() => window.telegramAnalytics !== undefined);
      await trackEvent(app.page, 'after-reload');
      const events = await waitForEvents(
        service,
        app.appName,
        (stored) => customEvents(stored, 'after-reload').length === 1,
      );
      expect(count(events, 'app-init')).toBe(1);
      expect(customEvents(events, 'after-reload')[0]!.session_id).toBe(init!.session_id);

      // a new launch (Telegram opens a new WebView; same storage, fresh session storage): a new session
      const relaunched = await app.context.newPage();
      await relaunched.goto(app.url + launchHash({ platform: 'android' }));
      const launches = await waitForEvents(service, app.appName, (stored) => count(stored, 'app-init') === 2);
      const sessions = launches.filter((event) => event.event_name === 'app-init').map((event) => event.session_id);
      expect(sessions[1]).toMatch(UUID_V4);
      expect(sessions[1]).not.toBe(sessions[0]);
      expect(app.errors).toEqual([]);
    } finally {
      await app.context.close();
    }
  });

  it('sends app-hide when the page becomes hidden, at most 3 times per launch', async ({ expect }) => {
    const app = await openMiniApp();
    try {
      await waitForEvents(service, app.appName, (events) => count(events, 'app-init') === 1);
      for (let i = 0; i < 4; i++) {
        await setVisibility(app.page, 'hidden');
        await setVisibility(app.page, 'visible');
      }
      await waitForEvents(service, app.appName, (events) => count(events, 'app-hide') === 3);
      // same launch after a reload: the cap still holds
      await app.page.reload();
      await app.page.waitForFunction(() => window.telegramAnalytics !== undefined);
      await setVisibility(app.page, 'hidden');
      await setVisibility(app.page, 'visible');
      await trackEvent(app.page, 'after-hides');
      const events = await waitForEvents(
        service,
        app.appName,
        (stored) => customEvents(stored, 'after-hides').length === 1,
      );
      expect(count(events, 'app-hide')).toBe(3);
      expect(new Set(events.map((event) => event.session_id)).size).toBe(1);
      expect(app.errors).toEqual([]);
    } finally {
      await app.context.close();
    }
  });

  it('sends trackEvent(name, data) as custom-event with custom_data', async ({ expect }) => {
    const app = await openMiniApp();
    try {
      await trackEvent(app.page, 'buy-button', { plan: 'gold', price: 5, tags: ['a', 'b'], nested: { deep: true } });
      const events = await waitForEvents(
        service,
        app.appName,
        (stored) => customEvents(stored, 'buy-button').length === 1,
      );
      const [event] = customEvents(events, 'buy-button');
      expect(event!.props.custom_data).toEqual({
        name: 'buy-button',
        plan: 'gold',
        price: 5,
        tags: ['a', 'b'],
        nested: { deep: true },
      });
      expect(event).toMatchObject({ platform: 'tdesktop', locale: 'ru', is_premium: true, start_param: '' });
      expect(app.errors).toEqual([]);
    } finally {
      await app.context.close();
    }
  });

  it('drops custom data that cannot be sent as JSON without throwing or holding up later events', async ({
    expect,
  }) => {
    const app = await openMiniApp({ init: { debug: true } });
    try {
      const thrown = await app.page.evaluate(() => {
        const cycle: Record<string, unknown> = {};
        cycle.self = cycle;
        try {
          window.telegramAnalytics.trackEvent('bigint', { amount: BigInt(1) });
          window.telegramAnalytics.trackEvent('cycle', cycle);
          // a wallet library's event is handled in a listener: an error there would reach the page's error handlers
          window.dispatchEvent(
            new window.CustomEvent('ton-connect-transaction-signed', {
              detail: { type: 'transaction-signed', lt: BigInt(7) },
            }),
          );
          window.telegramAnalytics.trackEvent('fine', { when: new Date(0), dropped: undefined });
          return null;
        } catch (error) {
          return String(error);
        }
      });
      expect(thrown).toBeNull();
      const events = await waitForEvents(service, app.appName, (stored) => customEvents(stored, 'fine').length === 1);
      expect(customEvents(events, 'fine')[0]!.props.custom_data).toEqual({
        name: 'fine',
        when: '1970-01-01T00:00:00.000Z',
      });
      expect(events.map((event) => event.event_name).sort()).toEqual(['app-init', 'custom-event']);
      expect(app.console.some((message) => message.text().includes('cannot be sent as JSON'))).toBe(true);
      expect(app.errors).toEqual([]);
    } finally {
      await app.context.close();
    }
  });

  describe('TON Connect events, dispatched as @tonconnect/sdk and @tonconnect/ui do', () => {
    const libs = { ton_connect_sdk_lib: '3.4.1', ton_connect_ui_lib: '2.3.1' };
    const address = '0:9a1f0e8c3d3b3c1b9a3f2e8c7d6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d9c8b';
    const connection = (traceId?: string) => ({
      wallet_address: address,
      wallet_state_init: 'te6cckECFgEAAwQAAgE0AQ',
      wallet_type: 'tonkeeper',
      wallet_version: '4.1.0',
      auth_type: 'ton_proof',
      custom_data: { ...libs, client_id: 'b1c2d3', wallet_id: 'tonkeeper', chain_id: '-239', provider: 'http' },
      ...(traceId ? { trace_id: traceId } : {}),
    });
    const validUntil = String(Math.floor(Date.now() / 1000) + 300);
    const transaction = {
      valid_until: validUntil,
      from: address,
      messages: [{ address: '0:abcd', amount: '1000000' }],
    };
    const failedMessages = [
      { address: '0:abcd', amount: '1000000', payload: 'te6ccgEBAQEADAAAFAAAAABIZWxsbw', state_init: null },
    ];

    /** window.dispatchEvent(new CustomEvent(`ton-connect-<type>` or `ton-connect-ui-<type>`, { detail: { type, ...fields } })) */
    const dispatch = (page: Page, source: 'sdk' | 'ui', type: string, fields: Record<string, unknown>) =>
      page.evaluate(([name, detail]) => window.dispatchEvent(new window.CustomEvent(name, { detail })), [
        `ton-connect-${source === 'ui' ? 'ui-' : ''}${type}`,
        { type, ...fields },
      ] as const);

    it('stores every wallet event with its fields', async ({ expect }) => {
      const app = await openMiniApp();
      try {
        await dispatch(app.page, 'ui', 'connection-started', { custom_data: libs, trace_id: 't1' });
        await dispatch(app.page, 'sdk', 'connection-completed', { is_success: true, ...connection('t1') });
        await dispatch(app.page, 'sdk', 'connection-error', {
          is_success: false,
          error_message: 'User rejects',
          error_code: 300,
          trace_id: 't2',
          custom_data: libs,
        });
        await dispatch(app.page, 'sdk', 'connection-restoring-completed', { is_success: true, ...connection('t3') });
        await dispatch(app.page, 'sdk', 'connection-restoring-error', {
          is_success: false,
          error_message: 'Provider is not restored',
          trace_id: 't4',
          custom_data: libs,
        });
        await dispatch(app.page, 'sdk', 'transaction-sent-for-signature', { ...connection('t5'), ...transaction });
        await dispatch(app.page, 'sdk', 'transaction-signed', {
          is_success: true,
          signed_transaction: 'te6cckEBAgEAqgAB4Yg',
          ...connection('t5'),
          ...transaction,
        });
        await dispatch(app.page, 'sdk', 'transaction-signing-failed', {
          is_success: false,
          error_message: 'User declined the transaction',
          error_code: 300,
          ...connection('t6'),
          ...transaction,
          messages: failedMessages,
        });
        await dispatch(app.page, 'sdk', 'disconnection', { scope: 'wallet', ...connection('t7') });
        const names = [
          'connection-started',
          'connection-completed',
          'connection-error',
          'connection-restoring-completed',
          'connection-restoring-error',
          'transaction-sent-for-signature',
          'transaction-signed',
          'transaction-signing-failed',
          'disconnection',
        ];
        const events = await waitForEvents(service, app.appName, (stored) =>
          names.every((name) => count(stored, name) === 1),
        );
        const byName = (name: string) => events.find((event) => event.event_name === name)!;
        expect(byName('connection-started').props).toMatchObject({ custom_data: libs, trace_id: 't1' });
        expect(byName('connection-completed')).toMatchObject({ is_success: true, platform: 'tdesktop', locale: 'ru' });
        expect(byName('connection-completed').props).toMatchObject({
          wallet_address: address,
          wallet_type: 'tonkeeper',
          wallet_version: '4.1.0',
          auth_type: 1,
          wallet_state_init: 'te6cckECFgEAAwQAAgE0AQ',
          custom_data: { chain_id: '-239', provider: 'http', wallet_id: 'tonkeeper', ...libs },
        });
        expect(byName('connection-error')).toMatchObject({
          is_success: false,
          props: { error_message: 'User rejects', error_code: 300 },
        });
        expect(byName('connection-restoring-error').props).toMatchObject({ error_message: 'Provider is not restored' });
        expect(byName('transaction-sent-for-signature').props).toMatchObject({
          from: address,
          messages: transaction.messages,
          valid_until: new Date(Number(validUntil) * 1000).toISOString(),
        });
        expect(byName('transaction-signed')).toMatchObject({
          is_success: true,
          props: { signed_transaction: 'te6cckEBAgEAqgAB4Yg' },
        });
        const failed = byName('transaction-signing-failed');
        expect(failed).toMatchObject({
          is_success: false,
          props: { error_message: 'User declined the transaction', error_code: 300, trace_id: 't6' },
        });
        expect(failed.props.messages).toEqual(failedMessages);
        expect(byName('disconnection').props).toMatchObject({ scope: 'wallet', wallet_address: address });
        expect(app.errors).toEqual([]);
      } finally {
        await app.context.close();
      }
    });

    it('stores one event when the UI and the core library both report it or one library repeats a trace_id, and keeps separate reports apart', async ({
      expect,
    }) => {
      const app = await openMiniApp();
      try {
        // @tonconnect/ui + @tonconnect/sdk 3.4: both report the same action with the same trace_id
        await dispatch(app.page, 'ui', 'transaction-sent-for-signature', { ...connection('t10'), ...transaction });
        await dispatch(app.page, 'sdk', 'transaction-sent-for-signature', { ...connection('t10'), ...transaction });
        const failure = { is_success: false, ...connection('t10'), ...transaction, messages: failedMessages };
        await dispatch(app.page, 'sdk', 'transaction-signing-failed', {
          ...failure,
          error_message: 'User declined the transaction',
          error_code: 300,
        });
        await dispatch(app.page, 'ui', 'transaction-signing-failed', {
          ...failure,
          error_message: 'Transaction was cancelled',
          error_code: null,
        });
        // 3.0.x: no trace_id at all; both libraries report the one cancelled connection
        const cancelled = {
          is_success: false,
          error_message: 'Connection was cancelled',
          error_code: null,
          custom_data: libs,
        };
        await dispatch(app.page, 'ui', 'connection-error', cancelled);
        await dispatch(app.page, 'sdk', 'connection-error', cancelled);
        // two more cancellations reported by one library are two more events
        await dispatch(app.page, 'ui', 'connection-error', cancelled);
        await dispatch(app.page, 'ui', 'connection-error', cancelled);
        // 3.4: one opening of the wallets list is reported by the UI, and twice by the core library under one trace_id
        await dispatch(app.page, 'ui', 'connection-started', { custom_data: libs, trace_id: null });
        await dispatch(app.page, 'sdk', 'connection-started', { custom_data: libs, trace_id: 't20' });
        await dispatch(app.page, 'sdk', 'connection-started', { custom_data: libs, trace_id: 't20' });
        // a restore only the UI reports as failed: there was no connection to restore
        await dispatch(app.page, 'ui', 'connection-restoring-error', {
          is_success: false,
          error_message: 'Connection was not restored',
          trace_id: null,
          custom_data: libs,
        });
        await trackEvent(app.page, 'wallet-done');
        const events = await waitForEvents(
          service,
          app.appName,
          (stored) => customEvents(stored, 'wallet-done').length === 1,
        );
        expect(count(events, 'transaction-sent-for-signature')).toBe(1);
        expect(count(events, 'transaction-signing-failed')).toBe(1);
        expect(events.find((event) => event.event_name === 'transaction-signing-failed')!.props).toMatchObject({
          error_message: 'User declined the transaction',
          error_code: 300,
          trace_id: 't10',
        });
        expect(count(events, 'connection-error')).toBe(3);
        expect(count(events, 'connection-started')).toBe(1);
        expect(count(events, 'connection-restoring-error')).toBe(0);
        expect(app.errors).toEqual([]);
      } finally {
        await app.context.close();
      }
    });
  });

  describe('delivery', () => {
    it('loses nothing over an offline period', async ({ expect }) => {
      const app = await openMiniApp({ init: { debug: true } });
      try {
        await waitForEvents(service, app.appName, (events) => count(events, 'app-init') === 1);
        await app.context.setOffline(true);
        await trackEvent(app.page, 'offline-1');
        await trackEvent(app.page, 'offline-2');
        await setVisibility(app.page, 'hidden');
        await expect
          .poll(() => app.console.some((message) => message.text().includes('network error')), { timeout: 10_000 })
          .toBe(true);
        await app.context.setOffline(false);
        await setVisibility(app.page, 'visible');
        const events = await waitForEvents(
          service,
          app.appName,
          (stored) =>
            customEvents(stored, 'offline-1').length === 1 &&
            customEvents(stored, 'offline-2').length === 1 &&
            count(stored, 'app-hide') === 1,
        );
        expect(events).toHaveLength(4);
        expect(app.errors).toEqual([]);
      } finally {
        await app.context.close();
      }
    });

    it('sends app-hide at once, beside a request still in flight, and when the page is closed right after', async ({
      expect,
    }) => {
      const app = await openMiniApp({ open: false });
      try {
        let releaseFirst!: () => void;
        const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
        let posts = 0;
        await app.page.route(`${service.url}/events`, async (route) => {
          if (route.request().method() === 'POST' && ++posts === 1) await firstHeld; // app-init: no answer yet
          return route.fallback();
        });
        await app.page.goto(app.url + launchHash());
        await expect.poll(() => posts).toBe(1);
        await setVisibility(app.page, 'hidden');
        // delivered while the app-init request still waits for its answer
        await waitForEvents(service, app.appName, (events) => count(events, 'app-hide') === 1);
        expect(count(await storedEvents(service, app.appName), 'app-init')).toBe(0);
        releaseFirst();
        await waitForEvents(service, app.appName, (events) => count(events, 'app-init') === 1);
        await app.page.unrouteAll({ behavior: 'wait' });

        // the WebView goes away right after it is hidden: the keepalive request still arrives
        await setVisibility(app.page, 'visible');
        await trackEvent(app.page, 'last-words');
        await setVisibility(app.page, 'hidden');
        await app.page.close();
        const events = await waitForEvents(
          service,
          app.appName,
          (stored) => count(stored, 'app-hide') === 2 && customEvents(stored, 'last-words').length === 1,
        );
        expect(events).toHaveLength(4);
      } finally {
        await app.context.close();
      }
    });

    it('waits as long as a 429 asks and then sends the batch once', async ({ expect }) => {
      const app = await openMiniApp({ open: false });
      try {
        const times: number[] = [];
        await app.page.route(`${service.url}/events`, async (route) => {
          if (route.request().method() !== 'POST') return route.fallback();
          times.push(Date.now());
          if (times.length > 1) return route.fallback();
          return route.fulfill({
            status: 429,
            headers: {
              'access-control-allow-origin': pages.origin,
              'access-control-expose-headers': 'retry-after',
              'retry-after': '2',
              'content-type': 'application/json',
            },
            body: '{"message":"Too many requests. Try again later."}',
          });
        });
        await app.page.goto(app.url + launchHash());
        const events = await waitForEvents(service, app.appName, (stored) => count(stored, 'app-init') === 1);
        expect(events).toHaveLength(1);
        expect(times).toHaveLength(2);
        expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(1_900);
      } finally {
        await app.context.close();
      }
    });

    it('drops batches refused for good (403 domain), says so once in debug mode and does not retry them', async ({
      expect,
    }) => {
      const app = await openMiniApp({ domain: 'elsewhere.example', init: { debug: true } });
      try {
        await expect.poll(() => app.posts.length, { timeout: 5_000 }).toBe(1);
        await trackEvent(app.page, 'refused-too');
        // the next flush sends it, once
        await expect.poll(() => app.posts.length, { timeout: 5_000 }).toBe(2);
        await expect
          .poll(() => app.page.evaluate((key) => localStorage.getItem(key), `tma-analytics/queue:${app.appName}`), {
            timeout: 5_000,
          })
          .toBe('[]');
        await app.page.waitForTimeout(1_100); // two more flush intervals: no retry
        expect(app.posts).toHaveLength(2);
        const refusals = app.console.filter((message) =>
          message.text().includes('events refused: 403 The domain name does not match.'),
        );
        expect(refusals).toHaveLength(1);
        expect(await storedEvents(service, app.appName)).toEqual([]);
        expect(app.errors).toEqual([]);
      } finally {
        await app.context.close();
      }
    });

    it('retries through 503 answers and a lost answer, and stores every event once', async ({ expect }) => {
      const app = await openMiniApp({ init: { debug: true }, open: false });
      try {
        let posts = 0;
        const cors = { 'access-control-allow-origin': pages.origin, 'content-type': 'application/json' };
        await app.page.route(`${service.url}/events`, async (route) => {
          if (route.request().method() !== 'POST') return route.fallback();
          posts++;
          if (posts === 1) {
            // the service records the batch, but its answer is lost: the SDK sends it again
            const response = await route.fetch();
            expect(response.status()).toBe(201);
            return route.fulfill({ status: 503, headers: cors, body: '{"message":"Service Unavailable"}' });
          }
          if (posts === 2)
            return route.fulfill({ status: 503, headers: cors, body: '{"message":"Service Unavailable"}' });
          return route.fallback();
        });
        await app.page.goto(app.url + launchHash());
        await trackEvent(app.page, 'during-outage-1');
        await trackEvent(app.page, 'during-outage-2');
        const events = await waitForEvents(
          service,
          app.appName,
          (stored) =>
            customEvents(stored, 'during-outage-1').length === 1 &&
            customEvents(stored, 'during-outage-2').length === 1,
        );
        expect(posts).toBeGreaterThanOrEqual(3);
        expect(events.map((event) => event.event_name).sort()).toEqual(['app-init', 'custom-event', 'custom-event']);
        expect(app.console.some((message) => message.text().includes('503'))).toBe(true);
        expect(app.errors).toEqual([]);
      } finally {
        await app.context.close();
      }
    });

    it('retries a 400 "Failed to record"', async ({ expect }) => {
      const app = await openMiniApp({ init: { debug: true }, open: false });
      try {
        let posts = 0;
        await app.page.route(`${service.url}/events`, async (route) => {
          if (route.request().method() !== 'POST' || ++posts > 1) return route.fallback();
          return route.fulfill({
            status: 400,
            headers: { 'access-control-allow-origin': pages.origin, 'content-type': 'application/json' },
            body: '{"message":"Failed to record"}',
          });
        });
        await app.page.goto(app.url + launchHash());
        const events = await waitForEvents(service, app.appName, (stored) => count(stored, 'app-init') === 1);
        expect(posts).toBeGreaterThanOrEqual(2);
        expect(events).toHaveLength(1);
        expect(app.console.some((message) => message.text().includes('Failed to record'))).toBe(true);
      } finally {
        await app.context.close();
      }
    });

    it('drops only the event the service refuses for good, and goes on sending', async ({ expect }) => {
      const app = await openMiniApp({ init: { debug: true } });
      try {
        await waitForEvents(service, app.appName, (events) => count(events, 'app-init') === 1);
        await app.page.evaluate(() => {
          // nested deeper than the service accepts: a permanent 400 that names this one event
          let deep: Record<string, unknown> = { leaf: true };
          for (let i = 0; i < 20; i++) deep = { deep };
          window.telegramAnalytics.trackEvent('kept-before');
          window.telegramAnalytics.trackEvent('refused', deep);
          window.telegramAnalytics.trackEvent('kept-after');
        });
        await waitForEvents(service, app.appName, (events) => customEvents(events, 'kept-after').length === 1);
        await trackEvent(app.page, 'later');
        const events = await waitForEvents(
          service,
          app.appName,
          (stored) => customEvents(stored, 'later').length === 1,
        );
        expect(customEvents(events, 'kept-before')).toHaveLength(1);
        expect(customEvents(events, 'refused')).toHaveLength(0);
        expect(events).toHaveLength(4);
        expect(app.console.some((message) => message.text().includes('VALIDATION_MISMATCH_REPORT'))).toBe(true);
        // the store may hold the last event a moment before the SDK has read its 201
        const queue = () => app.page.evaluate((key) => localStorage.getItem(key), `tma-analytics/queue:${app.appName}`);
        await expect.poll(async () => JSON.parse((await queue()) ?? '[]')).toEqual([]);
      } finally {
        await app.context.close();
      }
    });
  });

  describe('outside Telegram', () => {
    const browserTab = { name: 'a plain browser tab', before: undefined };
    // telegram-web-app.js loaded in a normal browser: the objects exist, the launch data does not
    const webAppScriptOnly = {
      name: 'telegram-web-app.js without launch data',
      before: `window.Telegram = {
        WebView: { isIframe: false, initParams: {}, postEvent() {}, receiveEvent() {}, onEvent() {}, offEvent() {} },
        WebApp: { initData: '', initDataUnsafe: {}, platform: 'unknown', version: '6.0', ready() {} },
      };`,
    };
    it.for([browserTab, webAppScriptOnly])('throws nothing, sends nothing and says why in debug mode: $name', async ({
      before,
    }, { expect }) => {
      const app = await openMiniApp({ hash: '', before, init: { debug: true } });
      try {
        await app.page.waitForFunction(() => window.telegramAnalytics !== undefined);
        await app.page.evaluate(() => {
          window.telegramAnalytics.trackEvent('nobody');
          window.telegramAnalytics.init({});
          window.telegramAnalytics.init(undefined);
        });
        await setVisibility(app.page, 'hidden');
        await expect
          .poll(() => app.console.map((message) => message.text()).join('\n'))
          .toContain('not opened in Telegram');
        // two flush intervals: nothing may go out
        await app.page.waitForTimeout(1_100);
        expect(app.posts).toEqual([]);
        expect(await storedEvents(service, app.appName)).toEqual([]);
        expect(app.errors).toEqual([]);
        expect(app.console.filter((message) => message.type() === 'error').map((message) => message.text())).toEqual(
          [],
        );
      } finally {
        await app.context.close();
      }
    });

    it('reads window.Telegram.WebApp when it is there and changes nothing of Telegram but the two WebView functions it wraps, which hand every call on', async ({
      expect,
    }) => {
      const user = { id: 5_000_001, first_name: 'Ann', language_code: 'de', is_premium: false };
      // a Telegram object that records every write, replacement or deletion anywhere inside it
      const before = `(() => {
        const writes = (window.__telegramWrites = []);
        const watch = (target, path) => new Proxy(target, {
          get: (t, key, receiver) => {
            const value = Reflect.get(t, key, receiver);
            return value !== null && typeof value === 'object' ? watch(value, path + '.' + String(key)) : value;
          },
          set: (t, key, value, receiver) => (writes.push('set ' + path + '.' + String(key)), Reflect.set(t, key, value, receiver)),
          defineProperty: (t, key, descriptor) => (writes.push('define ' + path + '.' + String(key)), Reflect.defineProperty(t, key, descriptor)),
          deleteProperty: (t, key) => (writes.push('delete ' + path + '.' + String(key)), Reflect.deleteProperty(t, key)),
          setPrototypeOf: (t, proto) => (writes.push('prototype ' + path), Reflect.setPrototypeOf(t, proto)),
        });
        const telegram = {
          WebView: {
            isIframe: false,
            initParams: {},
            postEvent(...args) { (window.__posted = window.__posted || []).push(args); return 'posted'; },
            receiveEvent(...args) { (window.__received = window.__received || []).push(args); return 'received'; },
            onEvent() {},
            offEvent() {},
          },
          WebApp: {
            initData: 'user=' + encodeURIComponent(${JSON.stringify(JSON.stringify(user))}) + '&auth_date=1&hash=00',
            initDataUnsafe: { user: ${JSON.stringify(user)}, start_param: 'from_webapp', auth_date: '1', hash: '00' },
            platform: 'ios',
            version: '8.0',
            ready() {}, expand() {}, onEvent() {}, offEvent() {}, sendData() {},
          },
        };
        window.__telegramSnapshot = JSON.stringify(telegram);
        const watched = watch(telegram, 'Telegram');
        Object.defineProperty(window, 'Telegram', {
          configurable: false,
          get: () => watched,
          set: () => writes.push('replace window.Telegram'),
        });
      })();`;
      const app = await openMiniApp({ hash: '', before, init: { debug: true } });
      try {
        const [init] = await waitForEvents(service, app.appName, (events) => count(events, 'app-init') === 1);
        expect(init).toMatchObject({ platform: 'ios', locale: 'de', start_param: 'from_webapp', is_premium: false });
        await setVisibility(app.page, 'hidden');
        await waitForEvents(service, app.appName, (events) => count(events, 'app-hide') === 1);
        const check = await app.page.evaluate(() => ({
          writes: window.__telegramWrites,
          same: JSON.stringify(window.Telegram) === window.__telegramSnapshot,
          // what telegram-web-app.js would be called with, and answer
          answers: [
            window.Telegram.WebView.postEvent('web_app_open_invoice', false, { slug: '$abc' }),
            window.Telegram.WebView.receiveEvent('invoice_closed', { slug: 'abc', status: 'pending' }),
          ],
          posted: window.__posted,
          received: window.__received,
        }));
        expect(check).toEqual({
          // an assignment through the watching proxy is recorded as a set and the define it makes
          writes: [
            'set Telegram.WebView.postEvent',
            'define Telegram.WebView.postEvent',
            'set Telegram.WebView.receiveEvent',
            'define Telegram.WebView.receiveEvent',
          ],
          same: true,
          answers: ['posted', 'received'],
          posted: [['web_app_open_invoice', false, { slug: '$abc' }]],
          received: [['invoice_closed', { slug: 'abc', status: 'pending' }]],
        });
        // the invoice's opening is recorded without its "$"; a pending one is not closed yet
        const events = await waitForEvents(service, app.appName, (stored) => count(stored, 'purchase-init') === 1);
        expect(events.find((event) => event.event_name === 'purchase-init')!.props.slug).toBe('abc');
        expect(events.map((event) => event.event_name)).not.toContain('purchase-failed');
        expect(app.errors).toEqual([]);
      } finally {
        await app.context.close();
      }
    });
  });
});

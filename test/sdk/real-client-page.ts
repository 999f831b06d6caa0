// A mini app page built from real client libraries, with test doubles only where a person or a native app would be:
// Telegram's telegram-web-app.js (@twa-dev/sdk 8.0.2) over a double of the native side (TelegramWebviewProxy, which
// answers web_app_open_invoice with invoice_closed of a chosen status), @tonconnect/ui (2.0.5 or 2.4.4) with a
// JS-bridge v2 test wallet injected into the page, and an analytics script tag as the official snippet writes it.
import fs from 'node:fs';
import type { Page } from 'playwright-core';
import type { PageServer } from './browser-harness.ts';

declare const window: any;

export const TELEGRAM_WEB_APP = 'node_modules/@twa-dev/sdk/dist/telegram-web-apps.js';
export const TONCONNECT_UI = {
  '2.0.5': 'node_modules/tonconnect-ui-2.0.5/dist/tonconnect-ui.min.js',
  '2.4.4': 'node_modules/@tonconnect/ui/dist/tonconnect-ui.min.js',
} as const;
export type UiVersion = keyof typeof TONCONNECT_UI;

for (const file of [TELEGRAM_WEB_APP, ...Object.values(TONCONNECT_UI)])
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: npm ci installs the SDK suites' devDependencies`);

/**
 * The native side of Telegram: records what the page posts, answers web_app_open_invoice with invoice_closed (status
 * from window.__native.status) the way the Android app does, through Telegram.WebView.receiveEvent. Also records
 * every ton-connect window event the libraries dispatch, so that steps can wait for them.
 */
const NATIVE_DOUBLE = `(() => {
  const native = (window.__native = { posted: [], status: 'paid' });
  window.TelegramWebviewProxy = {
    postEvent(type, data) {
      native.posted.push(type);
      if (type !== 'web_app_open_invoice') return;
      const slug = JSON.parse(data).slug;
      const status = native.status;
      setTimeout(() => window.Telegram.WebView.receiveEvent('invoice_closed', { slug, status }), 10);
    },
  };
  const dispatched = (window.__dispatched = []);
  const dispatch = window.dispatchEvent.bind(window);
  window.dispatchEvent = (event) => {
    if (event.type.startsWith('ton-connect')) dispatched.push(event.type);
    return dispatch(event);
  };
})();`;

/**
 * A wallet injected as JS bridge v2 (window.tonkeeper: the key is one of the wallets @tonconnect/ui lists, which it
 * needs to take an injected wallet into account), in its own in-app browser (isWalletBrowser) unless
 * window.__embedded is false. It answers connect (or holds the answer until the test settles it), restoreConnection
 * (refused while never connected, as wallets do), sendTransaction (signs or rejects with code 300) and disconnect.
 */
const TEST_WALLET = `(() => {
  const address = '0:' + '9a'.repeat(32);
  const device = { platform: 'android', appName: 'testwallet', appVersion: '1.0.0', maxProtocolVersion: 2,
    features: ['SendTransaction', { name: 'SendTransaction', maxMessages: 4 }] };
  const wallet = (window.__wallet = { embedded: window.__embedded !== false, connect: 'approve', sign: 'sign',
    connected: false, calls: [], settle: null });
  let id = 0;
  const connected = () => ({ event: 'connect', id: ++id, payload: { device, items: [
    { name: 'ton_addr', address, network: '-239', publicKey: 'ab'.repeat(32), walletStateInit: 'te6cckEBAQEAAgAAAEysuc0=' },
  ] } });
  window.tonkeeper = { tonconnect: {
    deviceInfo: device,
    walletInfo: { name: 'Test Wallet', app_name: 'testwallet', image: 'https://wallet.example/icon.png',
      about_url: 'https://wallet.example', platforms: ['android', 'chrome'] },
    protocolVersion: 2,
    get isWalletBrowser() { return wallet.embedded; },
    connect() {
      wallet.calls.push('connect');
      if (wallet.connect === 'hold') return new Promise((resolve) => { wallet.settle = resolve; });
      wallet.connected = true;
      return Promise.resolve(connected());
    },
    restoreConnection() {
      wallet.calls.push('restoreConnection');
      if (!wallet.connected)
        return Promise.resolve({ event: 'connect_error', id: ++id, payload: { code: 0, message: 'Not connected' } });
      return Promise.resolve(connected());
    },
    send(request) {
      wallet.calls.push(request.method);
      if (request.method === 'disconnect') {
        wallet.connected = false;
        return Promise.resolve({ result: {}, id: request.id });
      }
      if (request.method !== 'sendTransaction')
        return Promise.resolve({ error: { code: 400, message: 'Method not supported' }, id: request.id });
      if (wallet.sign === 'reject')
        return Promise.resolve({ error: { code: 300, message: 'User declined the transaction' }, id: request.id });
      return Promise.resolve({ result: 'te6cckEBAQEAAgAAAEysuc0=', id: request.id });
    },
    listen() { return () => {}; },
  } };
})();`;

export interface RealPageOptions {
  /** where the analytics script comes from: the official snippet's URL or our service's /index.js */
  analyticsScript: string;
  token: string;
  appName: string;
  ui: UiVersion;
  /** false: the wallet is injected but not the browser the app runs in, so the UI shows its list of wallets */
  embedded?: boolean;
}

/** Serves the page at /<appName>/index.html (the libraries beside it) and returns its URL. */
export function serveRealClientPage(pages: PageServer, options: RealPageOptions): string {
  const base = `/${options.appName}`;
  pages.script(`${base}/telegram-web-app.js`, TELEGRAM_WEB_APP);
  pages.script(`${base}/tonconnect-ui.min.js`, TONCONNECT_UI[options.ui]);
  const init = JSON.stringify({ token: options.token, appName: options.appName });
  return pages.page(
    `${base}/index.html`,
    `<!doctype html><html><head><meta charset="utf-8"><title>${options.appName}</title>
<script>window.__embedded = ${options.embedded !== false};${NATIVE_DOUBLE}${TEST_WALLET}</script>
<script src="${base}/telegram-web-app.js"></script>
<script src="${base}/tonconnect-ui.min.js"></script>
<script async src="${options.analyticsScript}" onload="initAnalytics()"></script>
<script>
  // as the official README asks: analytics first, then the app (here its TON Connect UI, which restores at once)
  function initAnalytics() {
    window.telegramAnalytics.init(${init});
    window.tonConnectUI = new TON_CONNECT_UI.TonConnectUI({
      manifestUrl: location.origin + '/tonconnect-manifest.json',
      buttonRootId: 'ton-connect',
    });
  }
</script>
</head><body><div id="ton-connect"></div></body></html>`,
  );
}

/** Waits for a condition in the page; fails saying what it waited for. */
export async function until<A>(
  page: Page,
  what: string,
  condition: string | ((arg: A) => unknown),
  arg?: A,
  timeoutMs = 60_000,
): Promise<void> {
  try {
    await page.waitForFunction(condition as string, arg, { timeout: timeoutMs, polling: 50 });
  } catch (error) {
    throw new Error(`waited ${timeoutMs} ms for ${what}: ${String(error).split('\n')[0]}`);
  }
}

/** how many times the libraries dispatched `name` on window so far */
export const dispatchedCount = (page: Page, name: string): Promise<number> =>
  page.evaluate((type) => window.__dispatched.filter((seen: string) => seen === type).length, name);

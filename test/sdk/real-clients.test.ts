// The same scripted session in a page of real libraries (Telegram's telegram-web-app.js, @tonconnect/ui 2.0.5 and
// 2.4.4 with an injected test wallet), once with the unchanged official @telegram-apps/analytics 1.6.4 script (its
// hard-coded host routed to this service) and once with ours, the page changed in the script tag's src alone: the
// events each stores are compared kind by kind and count by count.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { TestService } from '../helpers/service.ts';
import {
  chromiumAvailable,
  closeBrowserSuite,
  customEvents,
  launchHash,
  OFFICIAL_HOST,
  routeOfficialHost,
  requireOfficialScript,
  type StoredEvent,
  startBrowserSuite,
  storedEvents,
  waitForEvents,
  type PageServer,
} from './browser-harness.ts';
import { dispatchedCount, serveRealClientPage, type UiVersion, until } from './real-client-page.ts';

declare const window: any;
declare const document: any;
declare const localStorage: any;

const enabled = chromiumAvailable();
if (enabled) requireOfficialScript();

let service: TestService;
let pages: PageServer;
let browser: Browser;
let appCounter = 0;

// a service, a page server and Chromium starting together on a loaded machine
beforeAll(async () => {
  if (enabled) ({ service, pages, browser } = await startBrowserSuite());
}, 400_000);
afterAll(() => closeBrowserSuite({ service, pages, browser }));

type Client = 'official' | 'ours';

interface ClientPage {
  client: Client;
  appName: string;
  context: BrowserContext;
  page: Page;
}

/**
 * Registers an app, serves the page with the client's script tag (the official snippet's URL, or our service's
 * /index.js) and opens it as Telegram would. The official script's host is routed to this service; every other
 * host is out of reach (the wallets list, the official bundle's fingerprinting add-on).
 */
async function openClientPage(client: Client, ui: UiVersion, embedded = true): Promise<ClientPage> {
  const appName = `real_${client}_${ui.replace(/\./g, '')}_${process.pid}_${++appCounter}`;
  const token = await service.createApp(appName, 'localhost');
  const analyticsScript = client === 'official' ? `https://${OFFICIAL_HOST}/index.js` : `${service.url}/index.js`;
  const url = serveRealClientPage(pages, { analyticsScript, token, appName, ui, embedded });
  const context = await browser.newContext();
  await routeOfficialHost(context, service.url);
  const page = await context.newPage();
  // the libraries are big and the machine may be busy: wait for what the session needs, not for every load
  await page.goto(url + launchHash({ platform: 'android' }), { waitUntil: 'domcontentloaded', timeout: 120_000 });
  await until(
    page,
    'the analytics script and the TON Connect UI',
    () => window.telegramAnalytics && window.tonConnectUI,
    undefined,
    120_000,
  );
  return { client, appName, context, page };
}

/** the page's own last event (a ton-connect-custom-event, which both clients send): once stored, the session is */
async function endSession(client: ClientPage): Promise<StoredEvent[]> {
  await client.page.evaluate(() =>
    window.dispatchEvent(
      new window.CustomEvent('ton-connect-custom-event', {
        detail: { type: 'custom-event', custom_data: { name: 'session-end' } },
      }),
    ),
  );
  await waitForEvents(service, client.appName, (events) => customEvents(events, 'session-end').length === 1, 40_000);
  if (client.client === 'ours')
    await until(
      client.page,
      'our outbox to be empty',
      (key) => localStorage.getItem(key) === '[]',
      `tma-analytics/queue:${client.appName}`,
    );
  await service.loaded();
  return storedEvents(service, client.appName);
}

const countByKind = (events: StoredEvent[]) => {
  const counts: Record<string, number> = {};
  for (const event of events) counts[event.event_name] = (counts[event.event_name] ?? 0) + 1;
  return counts;
};

const TRANSFER = 'EQASEhISEhISEhISEhISEhISEhISEhISEhISEhISEhISEuHS';
const INVOICE = {
  slug: 'gold-plan-1',
  title: 'Gold plan',
  description: 'A month of gold',
  payload: 'order-1',
  currency: 'XTR',
  prices: [{ label: 'Gold plan', amount: 50 }],
};

/**
 * Launch (the UI restores no connection: the wallet never had one), the modal opened and closed while the wallet asks
 * (the user declines), connect, one signed and one rejected transaction, disconnect, one paid and one cancelled
 * invoice, a registerInvoice, hide.
 */
async function scriptedSession(client: ClientPage, expect: (value: unknown) => any): Promise<StoredEvent[]> {
  const { page } = client;
  await until(page, 'the failed restore at launch', () =>
    window.__dispatched.includes('ton-connect-connection-restoring-error'),
  );

  await page.evaluate(() => {
    window.__wallet.connect = 'hold';
    void window.tonConnectUI.openModal();
  });
  await until(page, 'the wallet to be asked to connect', () => window.__wallet.settle !== null);
  await page.evaluate(() => {
    window.tonConnectUI.closeModal();
    window.__wallet.settle({ event: 'connect_error', id: 99, payload: { code: 300, message: 'User declined' } });
  });
  await until(page, 'the core library to report the declined connection', () =>
    window.__dispatched.includes('ton-connect-connection-error'),
  );

  await page.evaluate(() => {
    window.__wallet.connect = 'approve';
    void window.tonConnectUI.openModal();
  });
  await until(page, 'the wallet to be connected', () => window.tonConnectUI.connected === true);

  const send = (sign: 'sign' | 'reject', amount: string) =>
    page.evaluate(
      ([answer, transfer, nanotons]) => {
        window.__wallet.sign = answer;
        const request = {
          validUntil: Math.floor(Date.now() / 1000) + 300,
          messages: [{ address: transfer, amount: nanotons }],
        };
        return window.tonConnectUI.sendTransaction(request).then(
          () => 'signed',
          () => 'rejected',
        );
      },
      [sign, TRANSFER, amount] as const,
    );
  expect(await send('sign', '1000000')).toBe('signed');
  expect(await send('reject', '2000000')).toBe('rejected');
  await page.evaluate(() => window.tonConnectUI.disconnect());

  const openInvoice = (url: string, status: string) =>
    page.evaluate(
      ([link, answer]) =>
        new Promise((resolve) => {
          window.__native.status = answer;
          window.Telegram.WebApp.openInvoice(link, resolve);
        }),
      [url, status] as const,
    );
  expect(await openInvoice(`https://t.me/$${INVOICE.slug}`, 'paid')).toBe('paid');
  expect(await openInvoice('https://t.me/invoice/silver-plan-2', 'cancelled')).toBe('cancelled');
  await page.evaluate((invoice) => window.telegramAnalytics.registerInvoice(invoice), INVOICE);

  await page.evaluate(() => {
    Object.defineProperty(document, 'visibilityState', { value: 'hidden', configurable: true });
    Object.defineProperty(document, 'hidden', { value: true, configurable: true });
    document.dispatchEvent(new Event('visibilitychange', { bubbles: true }));
  });
  return endSession(client);
}

/** what the official client stores for the scripted session, with either version of the UI */
const OFFICIAL_COUNTS = {
  'app-init': 1,
  'connection-restoring-error': 1,
  'connection-started': 2,
  'connection-error': 2,
  'connection-completed': 1,
  'transaction-sent-for-signature': 2,
  'transaction-signed': 1,
  'transaction-signing-failed': 1,
  disconnection: 1,
  'purchase-init': 2,
  'purchase-success': 1,
  'purchase-cancelled': 1,
  'register-invoice': 1,
  'app-hide': 1,
  'custom-event': 1,
};

/**
 * Where ours stores another count than the official client, and why. Ours never stores a kind or a count more: no
 * extra kinds appear in this session.
 */
const OURS_DIFFERS = {
  // the modal closed while the wallet asked: @tonconnect/ui reports "Connection was cancelled" and the core library
  // the wallet's refusal (code 300); the official client stores both reports of the one action
  'connection-error': 1,
};

// one test at a time (each drives two pages side by side), with room for a busy machine: a guard against a hang
describe.runIf(enabled)('the official client and ours in a page of real libraries', { timeout: 600_000 }, () => {
  it.for(['2.0.5', '2.4.4'] as const)('store the same events for the same session, with @tonconnect/ui %s', async (ui, {
    expect,
  }) => {
    const official = await openClientPage('official', ui);
    const ours = await openClientPage('ours', ui);
    try {
      const [officialEvents, ourEvents] = await Promise.all([
        scriptedSession(official, expect),
        scriptedSession(ours, expect),
      ]);
      expect(countByKind(officialEvents)).toEqual(OFFICIAL_COUNTS);
      expect(countByKind(ourEvents)).toEqual({ ...OFFICIAL_COUNTS, ...OURS_DIFFERS });

      // the same fields where the service reads them: slugs, and the invoice that prices the purchase
      const invoiceFields = (events: StoredEvent[]) =>
        events
          .filter((event) => event.event_name.startsWith('purchase-') || event.event_name === 'register-invoice')
          .map((event) => {
            const { slug, title, description, payload, currency, prices } = event.props;
            return { name: event.event_name, slug, title, description, payload, currency, prices };
          });
      expect(invoiceFields(ourEvents)).toEqual(invoiceFields(officialEvents));
      expect(invoiceFields(ourEvents)).toEqual([
        { name: 'purchase-init', slug: INVOICE.slug },
        { name: 'purchase-success', slug: INVOICE.slug },
        { name: 'purchase-init', slug: 'silver-plan-2' },
        { name: 'purchase-cancelled', slug: 'silver-plan-2' },
        { name: 'register-invoice', ...INVOICE },
      ]);
      // Telegram still got every call our wrapper of its postEvent saw
      for (const client of [official, ours])
        expect(
          await client.page.evaluate(() =>
            window.__native.posted.filter((type: string) => type === 'web_app_open_invoice'),
          ),
        ).toHaveLength(2);
      const signingFailed = ourEvents.find((event) => event.event_name === 'transaction-signing-failed')!;
      expect(signingFailed.props).toMatchObject({ error_code: 300 });
    } finally {
      await official.context.close();
      await ours.context.close();
    }
  });

  it.for([
    '2.0.5',
    '2.4.4',
  ] as const)('store one connection-started and one connection-error when the list of wallets is opened and closed, with @tonconnect/ui %s', async (ui, {
    expect,
  }) => {
    const clients = await Promise.all([openClientPage('official', ui, false), openClientPage('ours', ui, false)]);
    try {
      const counts = await Promise.all(
        clients.map(async (client) => {
          await client.page.evaluate(() => void window.tonConnectUI.openModal());
          // 2.4.4's core library reports the opening twice
          const reports = ui === '2.4.4' ? 2 : 1;
          await until(
            client.page,
            `${reports} connection-started from the core library`,
            (expected) =>
              window.__dispatched.filter((type: string) => type === 'ton-connect-connection-started').length ===
              expected,
            reports,
          );
          await client.page.evaluate(() => window.tonConnectUI.closeModal());
          return countByKind(await endSession(client));
        }),
      );
      expect(await dispatchedCount(clients[1]!.page, 'ton-connect-ui-connection-started')).toBe(1);
      const expected = { 'app-init': 1, 'connection-started': 1, 'connection-error': 1, 'custom-event': 1 };
      expect(counts[0]).toEqual(expected);
      expect(counts[1]).toEqual(expected);
    } finally {
      for (const client of clients) await client.context.close();
    }
  });

  it.for([
    '2.0.5',
    '2.4.4',
  ] as const)('store only the failure of a transaction tried with no wallet connected (nothing reached a wallet), with @tonconnect/ui %s', async (ui, {
    expect,
  }) => {
    const clients = await Promise.all([openClientPage('official', ui, false), openClientPage('ours', ui, false)]);
    try {
      const counts = await Promise.all(
        clients.map(async (client) => {
          const answer = await client.page.evaluate(
            (transfer) =>
              window.tonConnectUI
                .sendTransaction({
                  validUntil: Math.floor(Date.now() / 1000) + 300,
                  messages: [{ address: transfer, amount: '1000000' }],
                })
                .then(
                  () => 'signed',
                  () => 'refused',
                ),
            TRANSFER,
          );
          expect(answer).toBe('refused');
          await until(client.page, 'the UI to report the failure', () =>
            window.__dispatched.includes('ton-connect-ui-transaction-signing-failed'),
          );
          return countByKind(await endSession(client));
        }),
      );
      expect(counts[1]).not.toHaveProperty('transaction-sent-for-signature');
      expect(counts[1]).toEqual(counts[0]);
      expect(counts[1]).toMatchObject({ 'transaction-signing-failed': 1 });
    } finally {
      for (const client of clients) await client.context.close();
    }
  });
});

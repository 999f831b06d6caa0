// The SDK's public behaviour: init (once, never throwing), automatic app-init / app-hide / wallet / invoice events,
// trackEvent for custom events and registerInvoice. Shared by the script build and the package build.
import { checkInvoice, type InvoicePayload, watchInvoices } from './invoices.ts';

export type { InvoicePayload };
import { readLaunch } from './launch.ts';
import { Sender, type Fields } from './sender.ts';
import { load, save, session, uuid } from './storage.ts';
import { listenToWallets } from './wallet.ts';

export interface InitOptions {
  /** access token from the management bot or the site */
  token: string;
  /** the app name the token was created for */
  appName: string;
  /**
   * the official client's choice between its two hosts; here 'STG' says the app runs in Telegram's test environment,
   * whose key signs its launches (one service is one host either way)
   */
  env?: 'STG' | 'PROD';
  /** base address of the analytics service; the script defaults to where it was loaded from */
  endpoint?: string;
  /** events per request, 1..20 (default 20) */
  batchSize?: number;
  /** how often waiting events are sent, in ms (default 2000) */
  flushIntervalMs?: number;
  /** log what the SDK does (and why it does nothing) to the console */
  debug?: boolean;
}

const MAX_HIDES_PER_LAUNCH = 3;

let track: ((name: string, fields?: Fields) => void) | undefined;

function start(options: InitOptions, defaultEndpoint: string | undefined): void {
  const debug = options?.debug === true;
  const log = (...parts: unknown[]) => {
    if (debug) console.info('[tma-analytics]', ...parts);
  };
  if (track) {
    log('init was already called; this call is ignored');
    return;
  }
  if (typeof options?.token !== 'string' || typeof options.appName !== 'string') {
    log('init needs { token, appName } strings');
    return;
  }
  const endpoint = (options.endpoint ?? defaultEndpoint ?? '').replace(/\/+$/, '');
  if (!endpoint) {
    log('no endpoint: pass init({ endpoint })');
    return;
  }
  const launch = readLaunch();
  if (!launch) {
    log('not opened in Telegram (no user in the launch data): nothing is collected');
    return;
  }

  const sessionKey = `tma-analytics/session:${options.appName}`;
  let launchState = load(session, sessionKey, { id: uuid(), initSent: false, hides: 0 });
  if (typeof launchState?.id !== 'string') launchState = { id: uuid(), initSent: false, hides: 0 };
  const sender = new Sender({
    endpoint,
    token: options.token,
    storageKey: `tma-analytics/queue:${options.appName}`,
    batchSize: Math.min(20, Math.max(1, options.batchSize ?? 20)),
    flushIntervalMs: options.flushIntervalMs ?? 2000,
    log,
  });
  track = (name, fields = {}) => {
    let event: Fields;
    try {
      // a JSON copy: data that cannot be sent (BigInt, cycles) is refused here instead of blocking the
      // outbox; undefined fields disappear; later changes to the caller's objects do not leak in
      event = JSON.parse(
        JSON.stringify({
          event_name: name,
          session_id: launchState.id,
          user_id: launch.userId,
          app_name: options.appName,
          is_premium: launch.isPremium,
          platform: launch.platform,
          locale: launch.locale,
          start_param: launch.startParam,
          client_timestamp: String(Date.now()),
          // never the full URL: Telegram puts the launch data (user included) into its fragment
          url_referer: location.origin + location.pathname,
          ...fields,
        }),
      );
    } catch (error) {
      return log(`${name} not sent: its data cannot be sent as JSON`, error);
    }
    sender.add(event);
    log('queued', name);
  };

  if (!launchState.initSent) {
    // the launch's proof, once, to this service only: Telegram signed it, so the launch counts as verified
    track(
      'app-init',
      launch.initData === undefined
        ? {}
        : { init_data: launch.initData, ...(options.env === 'STG' ? { init_data_env: 'test' } : {}) },
    );
    launchState.initSent = true;
  }
  save(session, sessionKey, launchState);
  // one app-hide per visible → hidden change: WebViews also report "hidden" again while closing
  let hidden = document.visibilityState === 'hidden';
  // on the document: the event is fired there (a window listener only sees it when it bubbles)
  document.addEventListener('visibilitychange', () => {
    const wasHidden = hidden;
    hidden = document.visibilityState === 'hidden';
    if (!hidden) return;
    if (!wasHidden && launchState.hides < MAX_HIDES_PER_LAUNCH) {
      launchState.hides++;
      save(session, sessionKey, launchState);
      track!('app-hide');
    }
    void sender.flush(true);
  });
  addEventListener('pagehide', () => void sender.flush(true));
  listenToWallets(track);
  if (!watchInvoices(track)) log('no Telegram.WebView (telegram-web-app.js) at init: invoices are not recorded');
  void sender.flush();
}

/**
 * Starts collecting. Safe to call twice (the second call does nothing) and never throws; a promise, as the official
 * client's init is, that is settled once the SDK is set up.
 */
export function initTracker(options: InitOptions, defaultEndpoint?: string): Promise<void> {
  try {
    start(options, defaultEndpoint);
  } catch (error) {
    if (options?.debug) console.info('[tma-analytics] init failed', error);
  }
  return Promise.resolve();
}

/** Sends a custom-event; custom_data holds `name` and the given data. Does nothing before init. */
export function trackEvent(name: string, data: Record<string, unknown> = {}): void {
  try {
    track?.('custom-event', { custom_data: { ...data, name } });
  } catch {
    // never break the host app
  }
}

/**
 * Sends register-invoice with the invoice as given: the service prices the purchase-success of the same slug with it.
 * Throws, as the official client does, when the invoice lacks a required field; does nothing else before init.
 */
export function registerInvoice(invoice: InvoicePayload): void {
  checkInvoice(invoice);
  try {
    track?.('register-invoice', { ...invoice });
  } catch {
    // never break the host app
  }
}

// Telegram Stars invoices, recorded as the official client records them: purchase-init when the page asks Telegram to
// open an invoice (Telegram.WebView.postEvent `web_app_open_invoice`), purchase-success / -cancelled / -failed when
// Telegram answers `invoice_closed`, and register-invoice for the invoice an app describes with registerInvoice.
import type { Fields } from './sender.ts';

/** An invoice as the Bot API's createInvoiceLink takes it, with the slug of the link it made (the official type). */
export interface InvoicePayload {
  slug: string;
  business_connection_id?: string;
  title: string;
  description: string;
  payload: string;
  provider_token?: string;
  currency: string;
  prices: { label: string; amount: number }[];
  subscription_period?: number;
  max_tip_amount?: number;
  suggested_tip_amounts?: number[];
  provider_data?: string;
  photo_url?: string;
  photo_size?: number;
  photo_width?: number;
  photo_height?: number;
  need_name?: boolean;
  need_phone_number?: boolean;
  need_email?: boolean;
  need_shipping_address?: boolean;
  send_phone_number_to_provider?: boolean;
  send_email_to_provider?: boolean;
  is_flexible?: boolean;
}

type Track = (name: string, fields: Fields) => void;

const CLOSED_STATUS: Record<string, string> = {
  paid: 'purchase-success',
  cancelled: 'purchase-cancelled',
  failed: 'purchase-failed',
};

/**
 * The official client's checks, with its messages: an app moving over keeps the errors it was written against.
 * Throws on a payload that is not an invoice.
 */
export function checkInvoice(invoice: unknown): asserts invoice is InvoicePayload {
  if (!invoice) throw new Error('Payload is required');
  const fields = invoice as Record<string, unknown>;
  for (const field of ['slug', 'title', 'description', 'payload', 'currency'])
    if (!fields[field] || typeof fields[field] !== 'string')
      throw new Error(`Field "${field}" is required and must be a string`);
  const prices = fields.prices;
  if (!Array.isArray(prices) || prices.length === 0) throw new Error('Field "prices" must be a non-empty array');
  for (const price of prices as Record<string, unknown>[]) {
    if (!price?.label || typeof price.label !== 'string') throw new Error('Each price must have a "label" string');
    if (typeof price.amount !== 'number' || price.amount <= 0)
      throw new Error('Each price must have a positive "amount" number');
  }
  for (const field of ['subscription_period', 'max_tip_amount', 'photo_size', 'photo_width', 'photo_height'])
    if (field in fields && typeof fields[field] !== 'number')
      throw new Error(`Field "${field}" must be a number if provided`);
  if ('suggested_tip_amounts' in fields) {
    const amounts = fields.suggested_tip_amounts;
    if (!Array.isArray(amounts)) throw new Error('Field "suggested_tip_amounts" must be an array if provided');
    if (amounts.some((amount) => typeof amount !== 'number'))
      throw new Error('All values in "suggested_tip_amounts" must be numbers');
  }
  for (const field of [
    'need_name',
    'need_phone_number',
    'need_email',
    'need_shipping_address',
    'send_phone_number_to_provider',
    'send_email_to_provider',
    'is_flexible',
  ])
    if (field in fields && typeof fields[field] !== 'boolean')
      throw new Error(`Field "${field}" must be a boolean if provided`);
}

interface Receiver {
  receiveEvent?: (eventType: string, eventData: unknown) => unknown;
}

interface TelegramWindow {
  Telegram?: { WebView?: Receiver & { postEvent?: (...args: unknown[]) => unknown } };
  TelegramGameProxy?: Receiver;
  TelegramGameProxy_receiveEvent?: (eventType: string, eventData: unknown) => unknown;
}

/**
 * Wraps Telegram.WebView.postEvent and every way Telegram delivers events to the page. Each wrapper hands the call
 * on to the function it replaced, with the same arguments and return value, whatever the recording does.
 * false when telegram-web-app.js is not on the page (nothing to wrap).
 */
export function watchInvoices(track: Track): boolean {
  const page = window as unknown as TelegramWindow;
  const webView = page.Telegram?.WebView;
  if (!webView || typeof webView.postEvent !== 'function') return false;

  const closed = (eventType: unknown, eventData: unknown) => {
    try {
      if (eventType !== 'invoice_closed') return;
      const invoice = (eventData ?? {}) as { slug?: unknown; status?: unknown };
      const name = typeof invoice.status === 'string' ? CLOSED_STATUS[invoice.status] : undefined;
      // pending: the payment is still being processed, and Telegram sends another invoice_closed when it settles
      if (name) track(name, { slug: invoice.slug });
    } catch {
      // never break Telegram's own event delivery
    }
  };

  const postEvent = webView.postEvent;
  webView.postEvent = function (this: unknown, ...args: unknown[]) {
    try {
      // postEvent(eventType, callback, eventData)
      const slug = (args[2] as { slug?: unknown } | undefined)?.slug;
      if (args[0] === 'web_app_open_invoice' && typeof slug === 'string')
        track('purchase-init', { slug: slug.replace(/^\$/, '') });
    } catch {
      // the call goes on below
    }
    return postEvent.apply(this, args);
  };

  const wrapReceiver = (receiver: Receiver | undefined) => {
    const receiveEvent = receiver?.receiveEvent;
    if (!receiver || typeof receiveEvent !== 'function') return;
    receiver.receiveEvent = function (this: unknown, eventType: string, eventData: unknown) {
      closed(eventType, eventData);
      return receiveEvent.call(this, eventType, eventData);
    };
  };
  // Android and iOS call Telegram.WebView.receiveEvent; older clients TelegramGameProxy.receiveEvent
  wrapReceiver(webView);
  wrapReceiver(page.TelegramGameProxy);
  const windowsPhone = page.TelegramGameProxy_receiveEvent;
  if (typeof windowsPhone === 'function')
    page.TelegramGameProxy_receiveEvent = function (this: unknown, eventType: string, eventData: unknown) {
      closed(eventType, eventData);
      return windowsPhone.call(this, eventType, eventData);
    };
  // Telegram Web runs the app in an iframe and posts the events from the parent window
  if (window.parent !== window)
    addEventListener('message', (event: MessageEvent) => {
      if (event.source !== window.parent || typeof event.data !== 'string') return;
      let message: { eventType?: unknown; eventData?: unknown };
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      closed(message?.eventType, message?.eventData);
    });
  return true;
}

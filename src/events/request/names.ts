// The event names the service records: the spec's twelve, those the official client also sends, and the server events.

/** docs/spec.md §6, with whether a wallet-connection (TON Connect) library produces the event */
export const SPEC_EVENTS = {
  'app-init': false,
  'app-hide': false,
  'custom-event': false,
  'connection-started': true,
  'connection-completed': true,
  'connection-error': true,
  'connection-restoring-completed': true,
  'connection-restoring-error': true,
  'transaction-sent-for-signature': true,
  'transaction-signed': true,
  'transaction-signing-failed': true,
  disconnection: true,
} as const;

/** sent by the official @telegram-apps/analytics client for Telegram Stars purchases */
export const PURCHASE_EVENTS = [
  'purchase-init',
  'purchase-success',
  'purchase-cancelled',
  'purchase-failed',
  'register-invoice',
] as const;

/**
 * sent by the integrator's own bot or backend with a server key (never from a page, whose token is public, so a page
 * cannot forge revenue): bot-start carries the /start payload as start_param, bot-command custom_data.command, the
 * payments custom_data.amount (Stars for XTR), custom_data.currency and custom_data.invoice_payload
 */
export const SERVER_EVENTS = ['bot-start', 'bot-command', 'successful-payment', 'refunded-payment'] as const;

/** server events whose custom_data must carry an amount and a currency */
export const PAYMENT_EVENTS = ['successful-payment', 'refunded-payment'] as const;

const SERVER_EVENT_SET: ReadonlySet<string> = new Set(SERVER_EVENTS);

export function isServerEvent(name: string): boolean {
  return SERVER_EVENT_SET.has(name);
}

export const EVENT_NAMES: readonly string[] = [...Object.keys(SPEC_EVENTS), ...PURCHASE_EVENTS, ...SERVER_EVENTS];

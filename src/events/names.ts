// The event names the service records: the spec's twelve plus those the official client also sends.

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

export const EVENT_NAMES: readonly string[] = [...Object.keys(SPEC_EVENTS), ...PURCHASE_EVENTS];

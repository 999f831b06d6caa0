// TON Connect events: @tonconnect/sdk (≥ 3.0.3) dispatches `ton-connect-<type>` and @tonconnect/ui
// (≥ 2.0.3) `ton-connect-ui-<type>` window events; their detail (minus `type`) becomes the event fields.
// When both libraries report the same failure, the second report is dropped.
import type { Fields } from './sender.ts';

export const WALLET_EVENTS = [
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

const SAME_REPORT_MS = 2000;

export function listenToWallets(track: (name: string, fields: Fields) => void): void {
  const seen = new Map<string, number>();
  const onEvent = (type: string) => (event: Event) => {
    const fields: Fields = { ...((event as CustomEvent).detail as Fields | null) };
    delete fields.type;
    // library versions differ in whether valid_until is a number; the service stores a string
    if (typeof fields.valid_until === 'number') fields.valid_until = String(fields.valid_until);
    const failure = /error|failed/.test(type);
    const key = `${type}|${failure ? `${fields.error_message}|${fields.error_code}` : (fields.trace_id ?? Math.random())}`;
    const now = Date.now();
    if ((seen.get(key) ?? -Infinity) > now - SAME_REPORT_MS) return;
    seen.set(key, now);
    track(type, fields);
  };
  for (const type of WALLET_EVENTS) {
    addEventListener(`ton-connect-${type}`, onEvent(type));
    addEventListener(`ton-connect-ui-${type}`, onEvent(type));
  }
}

// TON Connect events: @tonconnect/sdk (≥ 3.0.3) dispatches `ton-connect-<type>` and @tonconnect/ui
// (≥ 2.0.3) `ton-connect-ui-<type>` window events; their detail (minus `type`) becomes the event fields.
// An app with the UI runs both libraries, and both report most actions (a sent transaction, a cancelled
// one, a disconnection), often with different error messages for the same failure and, before 3.4, without
// a trace_id. So a report from one library that answers an unanswered report of the same type from the
// other one moments before (same trace_id, when both have one) is the same action and is dropped.
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

/** how far apart the two libraries' reports of one action may be (the UI reports a cancel when its modal closes) */
const SAME_ACTION_MS = 10_000;

interface Report {
  at: number;
  trace: unknown;
}

export function listenToWallets(track: (name: string, fields: Fields) => void): void {
  // reports not yet answered by the other library, by "<library><type>"
  const open: Record<string, Report[]> = {};
  const listen = (type: string, library: string, other: string) =>
    addEventListener(`ton-connect-${library}${type}`, (event: Event) => {
      const fields: Fields = { ...((event as CustomEvent).detail as Fields | null) };
      delete fields.type;
      // library versions differ in whether valid_until is a number; the service takes a string
      if (typeof fields.valid_until === 'number') fields.valid_until = String(fields.valid_until);
      const now = Date.now();
      const trace = fields.trace_id;
      const answered = (open[other + type] = (open[other + type] ?? []).filter(
        (report) => report.at > now - SAME_ACTION_MS,
      ));
      const same = answered.findIndex((report) => report.trace == null || trace == null || report.trace === trace);
      if (same >= 0) {
        answered.splice(same, 1);
        return;
      }
      (open[library + type] = (open[library + type] ?? []).filter((report) => report.at > now - SAME_ACTION_MS)).push({
        at: now,
        trace,
      });
      track(type, fields);
    });
  for (const type of WALLET_EVENTS) {
    listen(type, '', 'ui-');
    listen(type, 'ui-', '');
  }
}

// TON Connect events: @tonconnect/sdk (≥ 3.0.3) dispatches `ton-connect-<type>` and @tonconnect/ui
// (≥ 2.0.3) `ton-connect-ui-<type>` window events; their detail (minus `type`) becomes the event fields.
// One user action is stored once, however many reports it makes:
// - An app with the UI runs both libraries, and both report most actions (a sent transaction, a cancelled one, a
//   disconnection), often with different error messages for the same failure and, before 3.4, without a trace_id.
//   So a report from one library that answers an unanswered report of the same type from the other one moments
//   before (same trace_id, when both have one) is the same action and is dropped.
// - One library can report one action twice under the same trace_id (@tonconnect/sdk 3.4 sends connection-started
//   when the UI's modal opens and again when it shows the wallets; connection-completed twice after a restore): a
//   report repeating a trace_id its library gave that type moments before is dropped.
// - The UI reports a failed restore also when there was nothing to restore; the core library reports every restore it
//   attempts, so restores are taken from the core alone (as the official client does).
// - The UI reports a transaction as sent for signature before it knows a wallet is connected (with none, only its
//   failure follows); the core library reports it when it really goes to a wallet, so that report is the core's.
// A page can also send an event of its own kind, as the official client allows: `ton-connect-custom-event` with
// detail.type naming the event.
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

/** reported by the core library alone (see above) */
const CORE_ONLY = new Set([
  'connection-restoring-completed',
  'connection-restoring-error',
  'transaction-sent-for-signature',
]);

/** how far apart the reports of one action may be (the UI reports a cancel when its modal closes) */
const SAME_ACTION_MS = 10_000;

interface Report {
  at: number;
  trace: unknown;
}

const asFields = (event: Event): Fields => {
  const fields: Fields = { ...((event as CustomEvent).detail as Fields | null) };
  delete fields.type;
  // library versions differ in whether valid_until is a number; the service takes a string
  if (typeof fields.valid_until === 'number') fields.valid_until = String(fields.valid_until);
  return fields;
};

export function listenToWallets(track: (name: string, fields: Fields) => void): void {
  // reports not yet answered by the other library, by "<library><type>"
  const open: Record<string, Report[]> = {};
  // every report with a trace_id, by "<library><type>"
  const traced: Record<string, Report[]> = {};
  const recent = (reports: Record<string, Report[]>, key: string, now: number) =>
    (reports[key] = (reports[key] ?? []).filter((report) => report.at > now - SAME_ACTION_MS));
  const listen = (type: string, library: string, other: string) =>
    addEventListener(`ton-connect-${library}${type}`, (event: Event) => {
      const fields = asFields(event);
      const now = Date.now();
      const trace = fields.trace_id;
      const seen = recent(traced, library + type, now);
      if (trace != null) {
        if (seen.some((report) => report.trace === trace)) return;
        seen.push({ at: now, trace });
      }
      const answered = recent(open, other + type, now);
      const same = answered.findIndex((report) => report.trace == null || trace == null || report.trace === trace);
      if (same >= 0) {
        answered.splice(same, 1);
        return;
      }
      recent(open, library + type, now).push({ at: now, trace });
      track(type, fields);
    });
  for (const type of WALLET_EVENTS) {
    listen(type, '', 'ui-');
    if (!CORE_ONLY.has(type)) listen(type, 'ui-', '');
  }
  addEventListener('ton-connect-custom-event', (event: Event) => {
    const name = ((event as CustomEvent).detail as Fields | null)?.type;
    if (typeof name === 'string') track(name, asFields(event));
  });
}

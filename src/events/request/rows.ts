// From one request's accepted events to the rows the store keeps: each normalised, its user pseudonymised and
// its identity keyed. The events of a request share their app and receive time.
import { normaliseEvent } from './normalise.ts';
import type { Pseudonymiser } from './pseudonym.ts';
import type { EventRow } from '../write/event-columns.ts';
import type { RawEvent } from './validate.ts';
import type { LaunchVerdict } from './launch-check.ts';

export interface RowSources {
  /** the verdict on each app-init's launch data, by the event's place */
  launches?: readonly (LaunchVerdict | undefined)[];
  /** the request came with a server key */
  sentByServer?: boolean;
}

export interface RequestRows {
  rows: EventRow[];
  /** the events' size as JSON text, as the daily quota counts it */
  bytes: number;
}

/** serialised: each event's JSON text when the quota already made it (the same text is hashed and measured) */
export function eventRows(
  appId: number,
  events: RawEvent[],
  receivedAt: Date,
  pseudonymiser: Pseudonymiser,
  serialised?: string[],
  sources: RowSources = {},
): RequestRows {
  const sentByServer = sources.sentByServer ? true : null;
  const rows: EventRow[] = new Array(events.length);
  // a batch is usually one user's (the official client sends a session's events): one keyed hash per user and
  // request. Kept for this request only, so no raw user id outlives it in memory.
  let lastUserId: string | undefined;
  let lastUserKey: Buffer | undefined;
  let bytes = 0;
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    const text = serialised?.[i] ?? JSON.stringify(event);
    bytes += text.length;
    const normalised = normaliseEvent(event, text, receivedAt);
    if (lastUserKey === undefined || normalised.userId !== lastUserId) {
      lastUserId = normalised.userId;
      lastUserKey = pseudonymiser.userKey(appId, normalised.userId);
    }
    const launch = sources.launches?.[i];
    // spelt out rather than spread: this runs for every event
    rows[i] = {
      appId,
      eventKey: pseudonymiser.eventKey(appId, text, normalised.sentAt, receivedAt.getTime()),
      userKey: lastUserKey,
      receivedAt,
      eventName: normalised.eventName,
      sessionId: normalised.sessionId,
      isPremium: normalised.isPremium,
      isSuccess: normalised.isSuccess,
      platform: normalised.platform,
      locale: normalised.locale,
      startParam: normalised.startParam,
      occurredAt: normalised.occurredAt,
      day: normalised.day,
      props: normalised.props,
      launchCheck: launch?.check ?? null,
      launchDay: launch?.day ?? null,
      launchProof: launch?.proof ?? null,
      sentByServer,
      bytes: text.length,
    };
  }
  return { rows, bytes };
}

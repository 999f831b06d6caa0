// What every surface (the site's API, the CLI's `apps show`, the bot's app card) shows of an app's activity:
// its last event, its events in total and its last refused request.
import type { RefusalLog } from '../request/refusal-log.ts';
import type { EventPlane, RejectionRow } from '../write/event-plane.ts';

export interface AppSummary {
  lastEventAt: Date | null;
  eventsTotal: number;
  lastRejection: RejectionRow | null;
}

/** what an app summary's document holds, in the JSON of the site's API and the CLI */
export interface AppSummaryDocument {
  last_event_at: string | null;
  events_total: number;
  last_rejection: {
    at: string;
    status: number;
    message: string;
    reason: string | null;
    origin: string | null;
  } | null;
}

type SummarySources = { events: Pick<EventPlane, 'activities'>; rejections: Pick<RefusalLog, 'last'> };

/** the apps' summaries in two reads, however many apps: a list of every app never floods the store with reads */
export async function appSummaries(
  sources: SummarySources,
  appIds: readonly number[],
): Promise<Map<number, AppSummary>> {
  const [activities, rejections] = await Promise.all([
    sources.events.activities(appIds),
    sources.rejections.last(appIds),
  ]);
  return new Map(
    appIds.map((appId) => [appId, { ...activities.get(appId)!, lastRejection: rejections.get(appId) ?? null }]),
  );
}

export async function appSummary(sources: SummarySources, appId: number): Promise<AppSummary> {
  return (await appSummaries(sources, [appId])).get(appId)!;
}

/**
 * Whether the last refused request came after the last stored event: then the owner is warned, since their
 * integration may be broken now; an older refusal is history.
 */
export function rejectedAfterLastEvent({ lastEventAt, lastRejection }: AppSummary): boolean {
  return lastRejection !== null && (lastEventAt === null || lastRejection.at > lastEventAt);
}

export function appSummaryDocument({ lastEventAt, eventsTotal, lastRejection }: AppSummary): AppSummaryDocument {
  return {
    last_event_at: lastEventAt?.toISOString() ?? null,
    events_total: eventsTotal,
    last_rejection: lastRejection
      ? {
          at: lastRejection.at.toISOString(),
          status: lastRejection.status,
          message: lastRejection.message,
          reason: lastRejection.reason ?? null,
          origin: lastRejection.origin,
        }
      : null,
  };
}

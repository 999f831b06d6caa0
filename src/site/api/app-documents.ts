// An app as the site shows it: its registration, the signed-in user's role and its activity summary.
import { type AppSummary, appSummaries, appSummary, appSummaryDocument } from '../../events/read/app-summary.ts';
import type { Services } from '../../services.ts';
import type { AppRecord } from '../../tokens/registry.ts';

function appDocument(record: AppRecord, activity: AppSummary) {
  return {
    app_name: record.appName,
    bot: record.bot,
    bot_id: record.botId,
    domains: record.domains,
    catalog_listed: record.catalogListed,
    role: record.role,
    token_prefix: record.tokenPrefix,
    created_at: record.createdAt.toISOString(),
    ...appSummaryDocument(activity),
  };
}

export function appDocuments(services: Services) {
  return {
    one: async (record: AppRecord) => appDocument(record, await appSummary(services, record.appId)),
    /** the apps as the site lists them: their summaries read together */
    all: async (records: AppRecord[]) => {
      const read = await appSummaries(
        services,
        records.map((record) => record.appId),
      );
      return records.map((record) => appDocument(record, read.get(record.appId)!));
    },
  };
}

// Under /api/apps/:name: what the bot tells the signed-in user about the app (their alerts), and the app's data
// controls (its retention period, and erasing one user's data: a data protection request).
import type { FastifyPluginAsync } from 'fastify';
import { alertSettingsDocument, parseAlertSettings } from '../../alerts/subscriptions.ts';
import { erasureDocument, retentionDocument } from '../../events/lifecycle/data-controls.ts';
import { parseRetention } from '../../events/lifecycle/retention.ts';
import { parseTelegramUserId } from '../../tokens/inputs.ts';
import type { SiteContext } from '../context.ts';
import { accepted, actorOfRequest, appOf, type NamedApp, nameOnly, userOf } from './requests.ts';

export const dataControlRoutes: FastifyPluginAsync<{ site: SiteContext }> = async (api, { site }) => {
  const { services } = site;
  const { alertSubscriptions, dataControls } = services;
  const viewing = { ...nameOnly, config: { permission: 'view' as const } };

  // the user's private chat with the bot has their id
  api.get<NamedApp>('/alerts', viewing, async (request) =>
    alertSettingsDocument(await alertSubscriptions.subscribe(appOf(request).appId, userOf(request).id)),
  );

  api.post<NamedApp & { Body: unknown }>('/alerts', viewing, async (request) => {
    const settings = accepted(parseAlertSettings(request.body), 'alerts');
    const subscription = await alertSubscriptions.subscribe(appOf(request).appId, userOf(request).id);
    const changed = await alertSubscriptions.change(subscription.id, userOf(request).id, settings);
    return alertSettingsDocument(changed ?? subscription);
  });

  api.get<NamedApp>('/data-controls', nameOnly, async (request) =>
    retentionDocument(await dataControls.retention(request.params.name, actorOfRequest(request))),
  );

  api.post<NamedApp & { Body: { days?: unknown } }>('/retention', nameOnly, async (request) => {
    const days = accepted(parseRetention(request.body?.days), 'days');
    return retentionDocument(await dataControls.setRetention(request.params.name, days, actorOfRequest(request)));
  });

  // the id travels in the body, never in a URL a log could keep
  api.post<NamedApp & { Body: { telegram_user_id?: unknown } }>('/users/erase', nameOnly, async (request) => {
    const telegramUserId = accepted(parseTelegramUserId(request.body?.telegram_user_id), 'telegram_user_id');
    // what this node accepted of the user's events is stored first, so the erase covers it too
    await services.caughtUp();
    return erasureDocument(await dataControls.eraseUser(request.params.name, telegramUserId, actorOfRequest(request)));
  });
};

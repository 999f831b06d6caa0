// An app's public read-only link: made, shown (its secret only when made) and revoked under /api/apps/:name/share,
// and the dashboard the link opens (its numbers only: no token, domains, refusals or events), with no sign-in.
import type { FastifyPluginAsync } from 'fastify';
import { RollupReader } from '../../events/read/dashboard.ts';
import { readHeadline } from '../../events/read/headline.ts';
import { InsightsReader } from '../../events/read/insights.ts';
import { refused } from '../../platform/http-error.ts';
import { makerDocument } from '../../tokens/makers.ts';
import { type ShareLinkInfo, sharePath } from '../../tokens/share-links.ts';
import type { SiteContext } from '../context.ts';
import { fields, text, validated } from '../schemas.ts';
import { actorOfRequest, filterOf, type NamedApp, nameOnly, periodOf, VIEW, type ViewQuery } from './requests.ts';

const shareDocument = (info: ShareLinkInfo | null) =>
  info === null
    ? { link: null }
    : { link: { prefix: info.prefix, created_at: info.createdAt.toISOString(), made_by: makerDocument(info.madeBy) } };

/** signed in, under /api/apps/:name */
export const shareRoutes: FastifyPluginAsync<{ site: SiteContext }> = async (api, { site }) => {
  const { shareLinks, config } = site.services;
  api.get<NamedApp>('/share', nameOnly, async (request) =>
    shareDocument(await shareLinks.current(request.params.name, actorOfRequest(request))),
  );
  api.post<NamedApp>('/share', nameOnly, async (request, reply) => {
    const { secret, info } = await shareLinks.create(request.params.name, actorOfRequest(request));
    reply.code(201);
    return { ...shareDocument(info), url: `${config.publicUrl ?? ''}${sharePath(secret)}` };
  });
  api.delete<NamedApp>('/share', nameOnly, async (request, reply) => {
    if (!(await shareLinks.revoke(request.params.name, actorOfRequest(request))))
      throw refused(404, 'This app has no public link.');
    return reply.code(204).send();
  });
};

/** public, under /api/share: the link's own rate limit runs before the link is looked up */
export const sharedDashboardRoutes: FastifyPluginAsync<{ site: SiteContext }> = async (api, { site }) => {
  const { services } = site;
  const rollups = new RollupReader(services.store.reads);
  const insights = new InsightsReader(services.store.reads);
  type SharedView = { Params: { secret: string }; Querystring: ViewQuery };
  // the link's own rate limit runs before the link is looked up
  const view = {
    ...validated({ params: fields({ secret: text(64) }), querystring: fields(VIEW) }),
    onRequest: site.shareLinkLimit,
  };
  const linkOf = async (secret: string) => {
    const shared = await services.shareLinks.resolve(secret);
    if (!shared) throw refused(404, 'This link does not exist or was revoked.');
    return shared;
  };

  // the first screen's figures, without revenue (a public link shows no money)
  api.get<SharedView>('/:secret/overview', view, async (request) => {
    const shared = await linkOf(request.params.secret);
    const filter = filterOf(request.query);
    return readHeadline(insights, shared.appId, periodOf(request.query), { filter, revenue: false });
  });

  api.get<SharedView>('/:secret/dashboard', view, async (request) => {
    const shared = await linkOf(request.params.secret);
    const [dashboard, activity] = await Promise.all([
      rollups.dashboard(shared.appId, periodOf(request.query), filterOf(request.query)),
      services.events.activities([shared.appId]).then((read) => read.get(shared.appId)!),
    ]);
    return {
      app: { app_name: shared.appName, last_event_at: activity.lastEventAt?.toISOString() ?? null },
      ...dashboard,
      rejections: [],
    };
  });
};

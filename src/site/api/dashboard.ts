// Under /api/apps/:name, for members who may view it: the dashboard, the insight cards (what the read API answers,
// with the dashboard's period and filter), funnels (saved ones edited by who may), property values, live events.
import type { FastifyPluginAsync } from 'fastify';
import { parseFunnelQuery } from '../../events/read/funnel-parameters.ts';
import { InsightsReader, MAX_FUNNEL_STEPS } from '../../events/read/insights.ts';
import { RollupReader } from '../../events/read/dashboard.ts';
import { readHeadline } from '../../events/read/headline.ts';
import { launchChecksDocument, readLaunchChecks } from '../../events/read/launch-checks.ts';
import { SavedFunnels } from '../../events/read/saved-funnels.ts';
import { refused } from '../../platform/http-error.ts';
import type { SiteContext } from '../context.ts';
import { fields, text, validated } from '../schemas.ts';
import { appDocuments } from './app-documents.ts';
import {
  accepted,
  appOf,
  filterOf,
  nameAnd,
  nameAndView,
  type NamedApp,
  nameOnly,
  periodOf,
  VIEW,
  type ViewQuery,
} from './requests.ts';

const VIEWING = { config: { permission: 'view' as const } };
/** viewing what the app sent until now: its last events, whether the first arrived */
const VIEWING_FRESH = { config: { permission: 'view' as const, fresh: true } };
const SAVING = { config: { permission: 'save-funnels' as const } };

export const dashboardRoutes: FastifyPluginAsync<{ site: SiteContext }> = async (api, { site }) => {
  const { services } = site;
  const rollups = new RollupReader(services.store.reads);
  const insights = new InsightsReader(services.store.reads);
  const funnels = new SavedFunnels(services.store.prisma);
  const documents = appDocuments(services);

  api.get<NamedApp & { Querystring: ViewQuery }>(
    '/dashboard',
    { ...nameAndView, ...VIEWING_FRESH },
    async (request) => {
      const record = appOf(request);
      const period = periodOf(request.query);
      const [dashboard, rejections, launches] = await Promise.all([
        rollups.dashboard(record.appId, period, filterOf(request.query)),
        services.rejections.recent(record.appId, 20),
        readLaunchChecks(services.store.reads, record.appId, period),
      ]);
      return {
        app: await documents.one(record),
        ...dashboard,
        rejections: rejections.map(({ appId: _appId, ...rejection }) => rejection),
        launch_checks: launchChecksDocument(launches),
      };
    },
  );

  // the first screen's figures and their changes, read apart from the dashboard's so one page never holds many of the
  // store's waiting places at once
  api.get<NamedApp & { Querystring: ViewQuery }>('/overview', { ...nameAndView, ...VIEWING }, async (request) =>
    readHeadline(insights, appOf(request).appId, periodOf(request.query), { filter: filterOf(request.query) }),
  );

  api.get<NamedApp & { Querystring: ViewQuery }>('/insights', { ...nameAndView, ...VIEWING }, async (request) => {
    const { appId } = appOf(request);
    const [period, filter] = [periodOf(request.query), filterOf(request.query)];
    const [summary, retention, custom, campaigns, revenue] = await Promise.all([
      insights.summary(appId, period, filter),
      insights.retention(appId, period, filter),
      insights.customEvents(appId, period, filter),
      insights.campaigns(appId, period, filter),
      insights.revenue(appId, period, filter),
    ]);
    return { period, summary, retention, custom_events: custom.events, campaigns: campaigns.campaigns, revenue };
  });

  api.get<NamedApp & { Querystring: ViewQuery & { steps?: string; by?: string; window?: string } }>(
    '/funnel',
    {
      ...validated({
        params: nameAnd({}),
        querystring: fields({ ...VIEW, steps: text(1024), by: text(16), window: text(16) }),
      }),
      ...VIEWING,
    },
    async (request) => {
      const query = accepted(parseFunnelQuery(request.query, MAX_FUNNEL_STEPS), 'steps');
      return insights.funnel(appOf(request).appId, periodOf(request.query), query, filterOf(request.query));
    },
  );

  // the app's funnels: the default wallet funnel, then those its owner saved (saving a name again edits it)
  api.get<NamedApp>('/funnels', { ...nameOnly, ...VIEWING }, async (request) => funnels.list(appOf(request).appId));

  api.post<NamedApp & { Body: Record<string, unknown> }>(
    '/funnels',
    { ...nameOnly, ...SAVING },
    async (request, reply) => {
      const saved = await funnels.save(appOf(request).appId, request.body ?? {});
      if (!saved.ok) throw refused(400, saved.error, saved.field);
      reply.code(201);
      return saved.funnel;
    },
  );

  api.delete<{ Params: { name: string; id: string } }>(
    '/funnels/:id',
    { ...validated({ params: nameAnd({ id: { type: 'string', pattern: '^[0-9]{1,9}$' } }) }), ...SAVING },
    async (request, reply) => {
      if (!(await funnels.delete(appOf(request).appId, Number(request.params.id))))
        throw refused(404, 'This app has no such funnel.');
      return reply.code(204).send();
    },
  );

  api.get<{ Params: { name: string; event: string; property: string }; Querystring: ViewQuery }>(
    '/custom-events/:event/properties/:property',
    {
      ...validated({ params: nameAnd({ event: text(256), property: text(256) }), querystring: fields(VIEW) }),
      ...VIEWING,
    },
    async (request) => {
      const { event, property } = request.params;
      const [period, filter] = [periodOf(request.query), filterOf(request.query)];
      return insights.customPropertyValues(appOf(request).appId, period, event, property, filter);
    },
  );

  api.get<NamedApp & { Querystring: ViewQuery }>('/recent', { ...nameAndView, ...VIEWING_FRESH }, async (request) =>
    rollups.recent(appOf(request).appId, 25, filterOf(request.query)),
  );
};

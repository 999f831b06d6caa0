// The site's JSON API under /api, as plugins registered with their prefixes: one preHandler signs the user in
// (and refuses cross-site writes) and, for routes that declare a permission, authorises the app the path names
// (src/tokens/policy.ts: a role too small answers 403, a stranger 404); errors are answered by src/app/errors.ts.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { refused } from '../../platform/http-error.ts';
import type { SiteContext } from '../context.ts';
import { actorOf, isSameOriginJson } from '../session.ts';
import { appRoutes } from './apps.ts';
import { dashboardRoutes } from './dashboard.ts';
import { dataControlRoutes } from './data-controls.ts';
import { exportRoutes } from './export.ts';
import { keyRoutes } from './keys.ts';
import { sharedDashboardRoutes, shareRoutes } from './share.ts';
import { teamRoutes } from './team.ts';
import { userOf } from './requests.ts';

/** the signed-in user's own routes: who they are, and (administrators) ending another user's sessions */
const accountRoutes: FastifyPluginAsync<{ site: SiteContext }> = async (api, { site }) => {
  api.get('/me', async (request) => {
    const user = userOf(request);
    return { name: user.name, is_admin: user.isAdmin };
  });

  // a lost phone, a stolen cookie, a departed operator
  api.post<{ Body: { telegram_id?: unknown } }>('/sessions/end', async (request) => {
    if (!userOf(request).isAdmin) throw refused(403, "Only administrators can end other users' sessions.");
    const id = String(request.body?.telegram_id ?? '').trim();
    if (!/^\d{1,20}$/.test(id)) throw refused(400, 'A Telegram user id is a number.', 'telegram_id');
    return { ended: await site.sessions.endAllOf(id) };
  });
};

const APP_ROUTES = [keyRoutes, shareRoutes, dataControlRoutes, dashboardRoutes, exportRoutes, teamRoutes];

export function registerApi(app: FastifyInstance, site: SiteContext): void {
  const { services } = site;
  app.register(async (api) => {
    api.decorateRequest('siteUser', null);
    api.decorateRequest('siteApp', null);
    await api.register(sharedDashboardRoutes, { site, prefix: '/api/share' });

    await api.register(async (signedIn) => {
      signedIn.addHook('preHandler', async (request) => {
        const user = await site.user(request);
        if (!user) throw refused(401, 'Sign in first.');
        if (request.method !== 'GET' && !isSameOriginJson(request, services.config.publicUrl))
          throw refused(403, 'Cross-site or non-JSON request refused.');
        request.siteUser = user;
        const { permission, fresh } = request.routeOptions.config;
        if (permission) {
          const { name } = request.params as { name: string };
          request.siteApp = await services.registry.authorize({ appName: name }, actorOf(user), permission);
        }
        // what the user's app just sent is in what these read; nobody waits on the loader before being let in
        if (fresh && request.method === 'GET') await services.caughtUp();
      });
      await signedIn.register(accountRoutes, { site, prefix: '/api' });
      await signedIn.register(appRoutes, { site, prefix: '/api/apps' });
      for (const routes of APP_ROUTES) await signedIn.register(routes, { site, prefix: '/api/apps/:name' });
    });
  });
}

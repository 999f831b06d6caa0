// The registration site served by the service: sign-in, the Analytics section, dashboards. Registered into the
// browser side's scope (src/app/app.ts), which its session cookie and security headers cover.
import cookie from '@fastify/cookie';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import { registerApi } from './api/index.ts';
import { registerAuthRoutes } from './auth-routes.ts';
import { SiteContext, type SiteOptions } from './context.ts';
import { registerSecurityHeaders } from './headers.ts';
import { registerPages } from './pages.ts';
import { shareLinkLimit } from './share-limit.ts';

export type { SiteOptions };

export async function registerSite(
  app: FastifyInstance,
  services: Services,
  options: SiteOptions = {},
): Promise<SiteContext> {
  await app.register(cookie, { secret: services.secrets.key('site-cookie').toString('base64url') });
  const site = new SiteContext(services, options);
  site.shareLinkLimit = await shareLinkLimit(app, services);
  registerSecurityHeaders(app, site);
  registerAuthRoutes(app, site);
  registerApi(app, site);
  await registerPages(app, site);
  return site;
}

// Security headers (helmet) on every site page and site API answer: a strict Content-Security-Policy
// (scripts only from the site's own files), no framing except by Telegram's web clients in Mini App
// mode, nosniff, a referrer policy. /events, the SDK script and the operational routes are left alone.
import helmet from '@fastify/helmet';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SiteContext } from './context.ts';

/** the web versions of Telegram, which show a Mini App in a frame */
export const TELEGRAM_WEB_CLIENTS = [
  'https://web.telegram.org',
  'https://*.web.telegram.org',
  'https://webk.telegram.org',
  'https://webz.telegram.org',
  'https://weba.telegram.org',
];
/** the Login Widget on /login: its script, and the frame it draws the button in */
export const LOGIN_WIDGET_SCRIPT = 'https://telegram.org/js/telegram-widget.js';
export const LOGIN_WIDGET_FRAME = 'https://oauth.telegram.org';

type HelmetOptions = NonNullable<Parameters<FastifyReply['helmet']>[0]>;

/** the site's routes (pages, its JSON API, its assets) and the public catalog */
const SITE_ROUTE = /^\/($|api\/|assets\/|analytics|auth\/|login|logout|webapp|catalog)/;

interface Policy {
  /** the page shows the Telegram Login Widget */
  widget: boolean;
  /** the page may be shown inside Telegram's web clients (Mini App mode) */
  miniApp: boolean;
  /** the answer is public data other sites may load (the catalog's JSON) */
  public: boolean;
  secure: boolean;
}

function helmetOptions({ widget, miniApp, public: open, secure }: Policy): HelmetOptions {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'self'"],
        'script-src': widget ? ["'self'", LOGIN_WIDGET_SCRIPT] : ["'self'"],
        'script-src-attr': ["'none'"],
        // style attributes carry computed widths (bars, charts); styles cannot run code
        'style-src': ["'self'", "'unsafe-inline'"],
        'img-src': ["'self'", 'data:'],
        'connect-src': ["'self'"],
        'font-src': ["'self'"],
        'object-src': ["'none'"],
        'base-uri': ["'none'"],
        'form-action': ["'self'"],
        'frame-src': widget ? [LOGIN_WIDGET_FRAME] : ["'none'"],
        'frame-ancestors': miniApp ? TELEGRAM_WEB_CLIENTS : ["'none'"],
      },
    },
    // the widget's sign-in window reports back to the page that opened it
    crossOriginOpenerPolicy: { policy: widget ? 'same-origin-allow-popups' : 'same-origin' },
    crossOriginResourcePolicy: { policy: open ? 'cross-origin' : 'same-origin' },
    // the Login Widget's frame may check which site embeds it: it is told the origin, never a path
    referrerPolicy: { policy: widget ? 'strict-origin-when-cross-origin' : 'same-origin' },
    // X-Frame-Options cannot name several origins: in Mini App mode frame-ancestors alone decides
    xFrameOptions: miniApp ? false : { action: 'deny' },
    // only for a site reached over https, and never for the operator's other subdomains
    strictTransportSecurity: secure ? { maxAge: 180 * 24 * 3600, includeSubDomains: false } : false,
  };
}

async function policyOf(request: FastifyRequest, route: string, site: SiteContext): Promise<Policy> {
  const miniApp =
    route === '/webapp' || (!route.startsWith('/assets/') && ((await site.user(request))?.miniApp ?? false));
  return { widget: route === '/login', miniApp, public: route === '/api/catalog', secure: site.secureCookies };
}

/**
 * On the root, before any route: helmet's reply decorator for every scope, and the headers of an answer to a site
 * path no route serves (a 404, judged by the path alone: no session is read for it).
 */
export async function registerNotFoundSecurityHeaders(app: FastifyInstance, secure: boolean): Promise<void> {
  await app.register(helmet, { global: false });
  app.addHook('onRequest', async (request, reply) => {
    if (request.routeOptions.url !== undefined) return;
    if (!SITE_ROUTE.test(request.url.split('?')[0]!)) return;
    reply.helmet(helmetOptions({ widget: false, miniApp: false, public: false, secure }));
  });
}

/** in the site's scope, after its cookie parser: the headers of every site route, by its policy */
export function registerSecurityHeaders(app: FastifyInstance, site: SiteContext): void {
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url;
    if (route === undefined || !SITE_ROUTE.test(route)) return;
    reply.helmet(helmetOptions(await policyOf(request, route, site)));
  });
}

// Security headers (helmet) on every site page and site API answer: a strict Content-Security-Policy
// (scripts only from the site's own files), no framing except by Telegram's web clients in Mini App
// mode, nosniff, a referrer policy. /events, the SDK script and the operational routes are left alone. helmet makes
// each policy's headers once; a request only picks its policy's set (a made-up share secret refused 429 pays no more).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import { TELEGRAM_WEB_APP_SCRIPT } from './page-shell.ts';
import type { SiteContext } from './context.ts';
import { SESSION_COOKIE } from './session.ts';

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
        // the Login Widget's script on /login; Telegram's Mini App script on the pages of a session begun in Telegram
        'script-src': [
          "'self'",
          ...(widget ? [LOGIN_WIDGET_SCRIPT] : []),
          ...(miniApp ? [TELEGRAM_WEB_APP_SCRIPT] : []),
        ],
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

type HeaderSet = readonly (readonly [string, string])[];

/** the headers helmet sets for one policy, recorded once: none of them depends on the request */
function recordedHeaders(options: HelmetOptions): HeaderSet {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: string) => void (headers[name.toLowerCase()] = value),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return Object.entries(headers);
}

/** on the response itself, as helmet does: answers streamed through reply.raw (the exports) carry them too */
function setHeaders(reply: FastifyReply, headers: HeaderSet): void {
  for (const [name, value] of headers) reply.raw.setHeader(name, value);
}

/** each policy's headers, made on first use, by the policy's four flags as a number */
const headerSets: HeaderSet[] = [];

export function securityHeaders(policy: Policy): HeaderSet {
  const index = +policy.widget | (+policy.miniApp << 1) | (+policy.public << 2) | (+policy.secure << 3);
  headerSets[index] ??= recordedHeaders(helmetOptions(policy));
  return headerSets[index];
}

async function miniAppSession(request: FastifyRequest, route: string, site: SiteContext): Promise<boolean> {
  if (route === '/webapp') return true;
  if (route.startsWith('/assets/')) return false;
  return (await site.user(request))?.miniApp ?? false;
}

/**
 * On the root, before any route: the headers of an answer to a site path no route serves (a 404, judged by the path
 * alone: no session is read for it). A callback hook that returns at once for every routed request.
 */
export function registerNotFoundSecurityHeaders(app: FastifyInstance, secure: boolean): void {
  const headers = securityHeaders({ widget: false, miniApp: false, public: false, secure });
  app.addHook('onRequest', (request, reply, done) => {
    if (request.is404 && SITE_ROUTE.test(request.url.split('?')[0]!)) setHeaders(reply, headers);
    done();
  });
}

/** in the site's scope, after its cookie parser: the headers of every site route, by its policy */
export function registerSecurityHeaders(app: FastifyInstance, site: SiteContext): void {
  const { secureCookies: secure } = site;
  const hook: onRequestHookHandler = (request, reply, done) => {
    const route = request.routeOptions.url;
    if (route === undefined || !SITE_ROUTE.test(route)) return done();
    const policy = { widget: route === '/login', public: route === '/api/catalog', secure };
    // only a signed-in session can be in Mini App mode: a request without the cookie reads nothing
    if (route !== '/webapp' && request.cookies[SESSION_COOKIE] === undefined) {
      setHeaders(reply, securityHeaders({ ...policy, miniApp: false }));
      return done();
    }
    miniAppSession(request, route, site).then((miniApp) => {
      setHeaders(reply, securityHeaders({ ...policy, miniApp }));
      done();
    }, done);
  };
  app.addHook('onRequest', hook);
}

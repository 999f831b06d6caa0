// The site's pages: landing, the Analytics section (my apps + new token) and the per-app dashboard.
// Pages are shells; the client scripts in ./client fill them from the JSON API.
import { createRequire } from 'node:module';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import type { SiteContext } from './context.ts';
import { DEFAULT_FUNNEL } from '../events/read/saved-funnels.ts';
import { escapeHtml } from '../platform/html.ts';
import { ROOT } from '../platform/project-paths.ts';
import { scriptSnippet, snippetTemplates } from '../sdk-serving/integration-snippet.ts';
import { page } from './page-shell.ts';
import { fields, text, validated } from './schemas.ts';

const CLIENT_DIR = path.join(ROOT, 'src', 'site', 'client');
const UPLOT_DIR = path.dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'));

/** the files served under /assets/: the site's client scripts, and uPlot's under /assets/uplot/ */
const CLIENT_FILES = new Set([
  '/apps.js',
  '/read-keys.js',
  '/dashboard.js',
  '/insight-tables.js',
  '/insights.js',
  '/common.js',
  '/webapp.js',
  '/sessions.js',
  '/data-controls.js',
  '/alerts.js',
  '/share.js',
  '/daily-chart.js',
  '/overview.js',
  '/first-event.js',
  '/mini-app.js',
]);
const UPLOT_FILES = new Set(['/uPlot.iife.min.js', '/uPlot.min.css']);

/** what the Analytics section's script fills in when it shows a new token */
const SNIPPETS = snippetTemplates();

/** one app's read API keys, filled by read-keys.js when the app list's "Read API keys" is pressed */
const READ_KEYS = `<div class="card" id="read-keys" data-try="${escapeHtml(SNIPPETS.readKey)}" hidden><h2>Read API keys of <span id="read-keys-app"></span></h2>
<p class="muted">A read key lets a script or a server read the app's analytics (<code>/api/v1/apps/…</code>); it cannot send events.</p>
<div id="read-keys-list"></div><p class="error" id="read-keys-error" role="alert"></p>
<p class="row"><button type="button" id="read-key-new">New read key</button><button type="button" class="secondary" id="read-keys-close">Close</button></p>
<div id="read-key-issued"></div></div>`;

/** one app's server keys, filled by read-keys.js when the app list's "Server keys" is pressed */
const SERVER_KEYS = `<div class="card" id="server-keys" data-try="${escapeHtml(SNIPPETS.serverKey)}" data-grammy-install="${escapeHtml(SNIPPETS.grammyInstall)}" data-grammy="${escapeHtml(SNIPPETS.grammy)}" hidden><h2>Server keys of <span id="server-keys-app"></span></h2>
<p class="muted">A server key lets the app's own bot or backend send events (<code>POST /events</code> with <code>Authorization: Bearer …</code>, no Origin needed): /start payloads, commands, payments and refunds. Keep it secret: never put it in a page.</p>
<div id="server-keys-list"></div><p class="error" id="server-keys-error" role="alert"></p>
<p class="row"><button type="button" id="server-key-new">New server key</button><button type="button" class="secondary" id="server-keys-close">Close</button></p>
<div id="server-key-issued"></div></div>`;

/** the funnel the dashboard shows when its URL names none, as the URL would name it */
const DEFAULT_FUNNEL_VIEW = escapeHtml(
  JSON.stringify({ steps: DEFAULT_FUNNEL.steps.join(','), by: DEFAULT_FUNNEL.by, window: DEFAULT_FUNNEL.window }),
);

/** the dashboard's filter: every card shows only the launches that match; the page's URL keeps it */
/** the dashboard's period, read and kept in the URL by dashboard.js */
const PERIOD = `<select id="period" aria-label="Period" style="width:auto"><option value="7">Last 7 days</option><option value="30" selected>Last 30 days</option><option value="90">Last 90 days</option></select>`;

const FILTERS = `<details class="filters" id="filter-panel" open><summary>Filter <span class="muted" id="filter-count"></span></summary><form id="filters" class="card row" aria-label="Filter">
<input name="platform" list="platform-values" placeholder="Platform" aria-label="Platform" style="width:auto;flex:1 1 120px">
<input name="language" list="language-values" placeholder="Language" aria-label="Language" style="width:auto;flex:1 1 100px">
<select name="premium" aria-label="Premium" style="width:auto;flex:1 1 150px"><option value="">Premium or not</option><option value="true">Premium users</option><option value="false">Other users</option></select>
<input name="campaign" list="campaign-values" placeholder="Campaign (start_param)" aria-label="Campaign" style="width:auto;flex:1 1 160px">
<select name="verified" aria-label="Traffic" style="width:auto;flex:1 1 170px"><option value="">All traffic</option><option value="true">Verified by Telegram</option><option value="false">Unverified</option></select>
<button type="submit">Filter</button><button type="button" class="secondary" id="clear-filters">Clear</button>
<p class="muted small" style="flex-basis:100%;margin:0">A campaign keeps the users who first arrived with that start_param, with everything they did later, on every card.</p>
<datalist id="platform-values"></datalist><datalist id="language-values"></datalist><datalist id="campaign-values"></datalist>
</form></details>`;

/** the dashboard's contents: dashboard.js lists every part of the page marked data-section */
const SECTIONS = '<nav class="sections" id="sections" aria-label="Sections"></nav>';

/** the administrator's view: end every session of a user (a stolen cookie, a departed operator) */
const ADMIN_SESSIONS = `<div class="card"><h2>Sessions (admin)</h2>
<form id="end-sessions" class="stack">
  <label>Telegram user id <input name="telegram_id" inputmode="numeric" pattern="[0-9]{1,20}" required></label>
  <p class="muted">Signs the user out on every browser and Mini App; they can sign in again with Telegram.</p>
  <p class="error" id="end-sessions-error" role="alert"></p><p id="end-sessions-done" role="status"></p>
  <button type="submit" class="danger">End all sessions</button>
</form></div>`;

export async function registerPages(app: FastifyInstance, site: SiteContext): Promise<void> {
  // cache headers, ETag and Last-Modified; nothing but the named files (no index, no listing)
  const assets = { maxAge: 300_000, index: false, list: false, decorateReply: false, wildcard: true } as const;
  await app.register(fastifyStatic, {
    ...assets,
    root: CLIENT_DIR,
    prefix: '/assets/',
    allowedPath: (pathName) => CLIENT_FILES.has(pathName),
  });
  await app.register(fastifyStatic, {
    ...assets,
    root: UPLOT_DIR,
    prefix: '/assets/uplot/',
    allowedPath: (pathName) => UPLOT_FILES.has(pathName),
  });

  app.get('/', async (request, reply) => {
    const user = await site.user(request);
    reply.type('text/html; charset=utf-8');
    return page({
      title: 'Analytics for Telegram Mini Apps',
      user: user?.name,
      body: `<h1>Know whether your mini app's events arrive, and what they say</h1>
<div class="grid">
  <div class="card"><h2>1 · Get a token</h2><p>Register your mini app here or in the management bot: bot address, domain, app name.</p></div>
  <div class="card"><h2>2 · Add the SDK</h2><p>One 3 KB script or the package; launches, hides and TON Connect events are collected automatically.</p>
    <pre>${escapeHtml(scriptSnippet(site.services.config.publicUrl ?? '', '{ token, appName }'))}</pre></div>
  <div class="card"><h2>3 · See it</h2><p>Last event time, rejected requests with their reason, daily users, sessions, the wallet funnel, and a public catalog ranking.</p></div>
</div>
<p class="row"><a class="button" href="${user ? '/analytics' : '/login'}">${user ? 'Open Analytics' : 'Sign in with Telegram'}</a><a class="button secondary" href="/catalog">Catalog</a></p>`,
    });
  });

  app.get<{ Querystring: { all?: string } }>(
    '/analytics',
    validated({ querystring: fields({ all: text(8) }) }),
    async (request, reply) => {
      const user = await site.pageUser(request, reply);
      if (!user) return reply;
      const everyone = request.query.all === '1' && user.isAdmin;
      reply.type('text/html; charset=utf-8');
      return page({
        title: 'Analytics',
        user: user.name,
        miniApp: user.miniApp,
        base: site.services.config.publicUrl,
        body: `<h1>Analytics</h1>
${user.isAdmin ? `<p class="row"><a href="/analytics">My apps</a> · <a href="/analytics?all=1">All apps (admin)</a></p>` : ''}
<div class="card"><h2>${everyone ? 'All apps' : 'My apps'}</h2><div id="apps" data-all="${everyone ? '1' : ''}"><p class="muted">Loading…</p></div></div>
${READ_KEYS}
${SERVER_KEYS}
<div class="card"><h2>New token</h2>
<form id="create" class="stack">
  <label>Bot address <input name="bot" placeholder="@my_app_bot or https://t.me/my_app_bot" required></label>
  <label>Bot id <input name="bot_id" inputmode="numeric" placeholder="7012345678" pattern="[0-9]{1,16}">
    <span class="muted">The number before ":" in the token @BotFather gave (only that number, never the token): Telegram signs your app's launches for it, and only verified launches count in the catalog.</span></label>
  <label>Mini app domain <input name="domain" placeholder="app.example.com" required></label>
  <label>App name (analytics identifier) <input name="app_name" placeholder="my_app" pattern="[a-z0-9_-]{3,64}" required></label>
  <label class="check"><input type="checkbox" name="catalog_listed" checked> List it in the public <a href="/catalog">catalog</a> (ranked on the users Telegram verified; you can take it out at any time)</label>
  <p class="error" id="create-error" role="alert"></p>
  <button type="submit">Create token</button>
</form>
<div id="issued" data-script="${escapeHtml(SNIPPETS.script)}" data-install="${escapeHtml(SNIPPETS.install)}" data-package="${escapeHtml(SNIPPETS.package)}"></div></div>
${everyone ? ADMIN_SESSIONS : ''}
<script src="/assets/common.js"></script><script src="/assets/read-keys.js"></script><script src="/assets/apps.js"></script>${everyone ? '<script src="/assets/sessions.js"></script>' : ''}`,
      });
    },
  );

  app.get<{ Params: { name: string } }>(
    '/analytics/:name',
    validated({ params: fields({ name: text(256) }) }),
    async (request, reply) => {
      const user = await site.pageUser(request, reply);
      if (!user) return reply;
      const name = escapeHtml(request.params.name);
      reply.type('text/html; charset=utf-8');
      return page({
        title: `${request.params.name} dashboard`,
        user: user.name,
        miniApp: user.miniApp,
        back: '/analytics',
        base: site.services.config.publicUrl,
        head: '<link rel="stylesheet" href="/assets/uplot/uPlot.min.css">',
        body: `<div class="row" style="margin-bottom:12px"><h1 style="margin:0 auto 0 0">${name}</h1>
  ${PERIOD}
  <a class="button secondary hide-narrow" id="export-csv" href="#">CSV</a><a class="button secondary hide-narrow" id="export-ndjson" href="#">NDJSON</a></div>
${FILTERS}
${SECTIONS}
<div id="dashboard" data-app="${name}" data-script="${escapeHtml(SNIPPETS.script)}"><p class="muted">Loading…</p></div>
<div id="insights" data-default-funnel="${DEFAULT_FUNNEL_VIEW}"></div>
<div id="live" data-section="Live"></div>
<div id="settings" data-section="Settings"><div class="card" id="data-controls" data-app="${name}" hidden></div>
<div class="card" id="alerts" data-app="${name}" hidden></div>
<div class="card" id="share" data-app="${name}" hidden></div></div>
<script src="/assets/uplot/uPlot.iife.min.js"></script><script src="/assets/common.js"></script><script src="/assets/daily-chart.js"></script><script src="/assets/overview.js"></script><script src="/assets/first-event.js"></script><script src="/assets/insight-tables.js"></script><script src="/assets/insights.js"></script><script src="/assets/dashboard.js"></script><script src="/assets/data-controls.js"></script><script src="/assets/alerts.js"></script><script src="/assets/share.js"></script>`,
      });
    },
  );

  // a public read-only link: the dashboard's cards only, read through the link's own API route
  app.get<{ Params: { secret: string } }>(
    '/share/:secret',
    { ...validated({ params: fields({ secret: text(64) }) }), onRequest: site.shareLinkLimit },
    async (request, reply) => {
      const shared = await site.services.shareLinks.resolve(request.params.secret);
      reply.type('text/html; charset=utf-8');
      if (!shared) {
        reply.code(404);
        return page({
          title: 'Link not found',
          body: '<div class="card"><h1>Link not found</h1><p>This link does not exist or was revoked by the app\u2019s owner.</p></div>',
        });
      }
      const name = escapeHtml(shared.appName);
      const api = escapeHtml(`/api/share/${encodeURIComponent(request.params.secret)}`);
      return page({
        title: `${shared.appName} dashboard`,
        head: '<link rel="stylesheet" href="/assets/uplot/uPlot.min.css"><meta name="robots" content="noindex">',
        body: `<div class="row" style="margin-bottom:16px"><h1 style="margin:0 auto 0 0">${name}</h1>
  ${PERIOD}</div>
${FILTERS}
${SECTIONS}
<div id="dashboard" data-app="${name}" data-api="${api}"><p class="muted">Loading…</p></div>
<div id="live"></div>
<p class="muted">A read-only view shared by the app\u2019s owner.</p>
<script src="/assets/uplot/uPlot.iife.min.js"></script><script src="/assets/common.js"></script><script src="/assets/daily-chart.js"></script><script src="/assets/overview.js"></script><script src="/assets/dashboard.js"></script>`,
      });
    },
  );
}

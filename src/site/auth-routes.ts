// Signing in and out: Telegram Login Widget callback, Mini App initData, operator one-time links.
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SiteContext } from './context.ts';
import { escape, page } from './layout.ts';
import { endSession, startSession } from './session.ts';
import { verifyInitData, verifyLoginWidget, type TelegramIdentity } from './telegram-auth.ts';

/** only local paths: never an open redirect */
function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?!\/)[\w\-./?=&%]*$/.test(next) ? next : '/analytics';
}

function refused(reply: FastifyReply, reason: string) {
  reply.code(403).type('text/html; charset=utf-8');
  return page({
    title: 'Sign-in refused',
    body: `<h1>Sign-in refused</h1><div class="card"><p class="error">${escape(reason)}</p><p><a href="/login">Try again</a></p></div>`,
  });
}

export function registerAuthRoutes(app: FastifyInstance, site: SiteContext): void {
  const botToken = site.services.config.botToken;
  const signIn = (reply: FastifyReply, identity: TelegramIdentity, next: string) => {
    startSession(reply, identity, site.secureCookies);
    return reply.redirect(next);
  };

  app.get<{ Querystring: { next?: string } }>('/login', async (request, reply) => {
    const next = safeNext(request.query.next);
    const bot = site.options.botUsername?.();
    const widget = bot
      ? `<script async src="https://telegram.org/js/telegram-widget.js?22" data-telegram-login="${escape(bot)}" data-size="large"
           data-auth-url="/auth/telegram?next=${encodeURIComponent(next)}" data-request-access="write"></script>`
      : '<p class="muted">The Telegram login button appears once the management bot is configured (BOT_TOKEN).</p>';
    reply.type('text/html; charset=utf-8');
    return page({
      title: 'Sign in',
      user: site.user(request)?.name,
      body: `<h1>Sign in</h1>
<div class="grid">
  <div class="card"><h2>With Telegram</h2>${widget}
    <p class="muted">Your Telegram account identifies your apps. Only a keyed hash of your id is stored.</p></div>
  <div class="card"><h2>From the bot</h2><p>Open the management bot${bot ? ` <a href="https://t.me/${escape(bot)}">@${escape(bot)}</a>` : ''} and tap
    <b>Analytics</b>: the dashboard opens inside Telegram, already signed in.</p>
    <h2>Operators</h2><p>Run <code>npm run -s cli -- login-link --telegram-id &lt;id&gt;</code> on the server for a one-time link.</p></div>
</div>`,
    });
  });

  // the Login Widget redirects here with its signed fields as query parameters
  app.get<{ Querystring: Record<string, string> }>('/auth/telegram', async (request, reply) => {
    const { next, ...fields } = request.query;
    const identity = botToken ? verifyLoginWidget(fields, botToken) : null;
    if (!identity) return refused(reply, 'The Telegram login data is invalid or expired.');
    return signIn(reply, identity, safeNext(next));
  });

  // Mini App mode: the page posts the initData Telegram gave it
  app.post<{ Body: { initData?: unknown } }>('/auth/webapp', async (request, reply) => {
    const initData = typeof request.body?.initData === 'string' ? request.body.initData : '';
    const identity = botToken ? verifyInitData(initData, botToken) : null;
    if (!identity) return reply.code(403).send({ message: 'The Mini App init data is invalid or expired.' });
    startSession(reply, identity, site.secureCookies);
    return { name: identity.name };
  });

  app.get('/webapp', async (_request, reply) => {
    reply.type('text/html; charset=utf-8');
    return page({
      title: 'Opening',
      body: `<p class="muted" id="status">Signing you in…</p>
<script>
(function () {
  var params = new URLSearchParams(location.hash.slice(1));
  var initData = (window.Telegram && Telegram.WebApp && Telegram.WebApp.initData) || params.get('tgWebAppData') || '';
  fetch('/auth/webapp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ initData: initData }) })
    .then(function (r) { if (r.ok) location.replace('/analytics'); else document.getElementById('status').textContent = 'Sign-in failed: open this page from the bot.'; });
})();
</script>`,
    });
  });

  app.get<{ Querystring: { token?: string } }>('/login/link', async (request, reply) => {
    const telegramId = request.query.token ? await site.loginLinks.redeem(request.query.token) : null;
    if (!telegramId) return refused(reply, 'This login link is invalid, expired or was already used.');
    return signIn(reply, { id: telegramId, name: `Operator ${telegramId}` }, '/analytics');
  });

  app.get('/logout', async (_request, reply) => {
    endSession(reply);
    return reply.redirect('/');
  });
}

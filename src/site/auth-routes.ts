// Signing in and out: Telegram Login Widget callback, Mini App initData, operator one-time links.
// Every sign-in proof works once; a widget payload only in the browser whose /login page asked for it.
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SiteContext } from './context.ts';
import { escapeHtml } from '../platform/html.ts';
import { page } from './page-shell.ts';
import { fields, text, validated } from './schemas.ts';
import { endSession, isSameOriginForm, isSameOriginJson, startSession } from './session.ts';
import { verifyInitData, verifyLoginWidget, type TelegramIdentity, type VerifiedSignIn } from './telegram-auth.ts';
import type { ProofKind } from '../tokens/single-use.ts';

/** ties a Login Widget sign-in to the browser that opened /login (a payload sent from elsewhere is refused) */
const LOGIN_STATE_COOKIE = 'tma_login_state';
const LOGIN_STATE_SECONDS = 3600;

/** only local paths: never an open redirect */
function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?!\/)[\w\-./?=&%]*$/.test(next) ? next : '/analytics';
}

function refused(reply: FastifyReply, reason: string) {
  reply.code(403).type('text/html; charset=utf-8');
  return page({
    title: 'Sign-in refused',
    body: `<h1>Sign-in refused</h1><div class="card"><p class="error">${escapeHtml(reason)}</p><p><a href="/login">Try again</a></p></div>`,
  });
}

function sameText(a: string, b: string): boolean {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}

export function registerAuthRoutes(app: FastifyInstance, site: SiteContext): void {
  const { config } = site.services;
  const botToken = config.botToken;
  const signIn = (reply: FastifyReply, identity: TelegramIdentity, miniApp = false) =>
    startSession(reply, site.sessions, identity, { secure: site.secureCookies, miniApp });
  /** the verified proof's user, unless the proof was used before */
  const firstUse = async (kind: ProofKind, verified: VerifiedSignIn | null) =>
    verified && (await site.usedProofs.claim(kind, verified.signature, verified.expiresAt)) ? verified.identity : null;

  /** the sign-in state of this browser: kept while valid, so two open /login tabs both work */
  const loginState = (request: FastifyRequest, reply: FastifyReply): string => {
    const raw = request.cookies[LOGIN_STATE_COOKIE];
    const kept = raw ? request.unsignCookie(raw) : undefined;
    if (kept?.valid && kept.value && /^[\w-]{22}$/.test(kept.value)) return kept.value;
    const state = crypto.randomBytes(16).toString('base64url');
    reply.setCookie(LOGIN_STATE_COOKIE, state, {
      signed: true,
      httpOnly: true,
      sameSite: 'lax',
      secure: site.secureCookies,
      path: '/',
      maxAge: LOGIN_STATE_SECONDS,
    });
    return state;
  };

  app.get<{ Querystring: { next?: string } }>(
    '/login',
    validated({ querystring: fields({ next: text(2048) }) }),
    async (request, reply) => {
      const next = safeNext(request.query.next);
      const bot = site.options.botUsername?.();
      const authUrl = `/auth/telegram?next=${encodeURIComponent(next)}&state=${loginState(request, reply)}`;
      const widget = bot
        ? `<script async src="https://telegram.org/js/telegram-widget.js?22" data-telegram-login="${escapeHtml(bot)}" data-size="large"
           data-auth-url="${escapeHtml(authUrl)}" data-request-access="write"></script>`
        : '<p class="muted">The Telegram login button appears once the management bot is configured (BOT_TOKEN).</p>';
      reply.type('text/html; charset=utf-8');
      return page({
        title: 'Sign in',
        user: (await site.user(request))?.name,
        body: `<h1>Sign in</h1>
<div class="grid">
  <div class="card"><h2>With Telegram</h2>${widget}
    <p class="muted">Your Telegram account identifies your apps. Only a keyed hash of your id is stored.</p></div>
  <div class="card"><h2>From the bot</h2><p>Open the management bot${bot ? ` <a href="https://t.me/${escapeHtml(bot)}">@${escapeHtml(bot)}</a>` : ''} and tap
    <b>Analytics</b>: the dashboard opens inside Telegram, already signed in.</p>
    <h2>Operators</h2><p>Run <code>npm run -s cli -- login-link --telegram-id &lt;id&gt;</code> on the server for a one-time link.</p></div>
</div>`,
      });
    },
  );

  // the Login Widget redirects here with its signed fields as query parameters
  app.get<{ Querystring: Record<string, string> }>(
    '/auth/telegram',
    validated({ querystring: fields({}, text(4096)) }),
    async (request, reply) => {
      const { next, state, ...signed } = request.query;
      const verified = botToken ? verifyLoginWidget(signed, botToken) : null;
      if (!verified) return refused(reply, 'The Telegram login data is invalid or expired.');
      const expected = request.cookies[LOGIN_STATE_COOKIE]
        ? request.unsignCookie(request.cookies[LOGIN_STATE_COOKIE])
        : undefined;
      if (!state || !expected?.valid || !expected.value || !sameText(state, expected.value)) {
        return refused(
          reply,
          "This sign-in did not start on this browser's sign-in page. Open the sign-in page and try again.",
        );
      }
      const identity = await firstUse('widget', verified);
      if (!identity) {
        // the browser that signed in comes back (the back button): it is still signed in as that user
        if ((await site.user(request))?.id === verified.identity.id) return reply.redirect(safeNext(next));
        return refused(reply, 'This Telegram login was already used. Sign in again.');
      }
      await signIn(reply, identity);
      reply.clearCookie(LOGIN_STATE_COOKIE, { path: '/' });
      return reply.redirect(safeNext(next));
    },
  );

  // Mini App mode: the page posts the initData Telegram gave it
  app.post<{ Body: { initData?: unknown } }>('/auth/webapp', async (request, reply) => {
    if (!isSameOriginJson(request, config.publicUrl))
      return reply.code(403).send({ message: 'Cross-site or non-JSON request refused.' });
    const initData = typeof request.body?.initData === 'string' ? request.body.initData : '';
    const verified = botToken ? verifyInitData(initData, botToken) : null;
    if (!verified) return reply.code(403).send({ message: 'The Mini App init data is invalid or expired.' });
    const identity = await firstUse('webapp', verified);
    if (!identity) {
      // the same Mini App page reloaded: its session goes on
      const user = await site.user(request);
      if (user?.id === verified.identity.id) return { name: user.name };
      return reply
        .code(403)
        .send({ message: 'This Mini App sign-in was already used. Open the dashboard from the bot again.' });
    }
    await signIn(reply, identity, true);
    return { name: identity.name };
  });

  app.get('/webapp', async (_request, reply) => {
    reply.type('text/html; charset=utf-8');
    return page({
      title: 'Opening',
      miniApp: true,
      body: `<p class="muted" id="status">Signing you in…</p><script src="/assets/webapp.js"></script>`,
    });
  });

  app.get<{ Querystring: { token?: string } }>(
    '/login/link',
    validated({ querystring: fields({ token: text(2048) }) }),
    async (request, reply) => {
      const telegramId = request.query.token ? await site.loginLinks.redeem(request.query.token) : null;
      if (!telegramId) return refused(reply, 'This login link is invalid, expired or was already used.');
      await signIn(reply, { id: telegramId, name: `Operator ${telegramId}` });
      return reply.redirect('/analytics');
    },
  );

  // sign-out changes state, so it is a same-origin POST; a GET shows the button that sends it
  app.get('/logout', async (request, reply) => {
    const user = await site.user(request);
    if (!user) return reply.redirect('/');
    reply.type('text/html; charset=utf-8');
    return page({
      title: 'Sign out',
      user: user.name,
      body: `<h1>Sign out</h1><div class="card"><form method="post" action="/logout"><button type="submit">Sign out</button></form></div>`,
    });
  });

  // the sign-out button is a plain form (no fields); the form type is read here only, never on /events
  app.register(async (scope) => {
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 1024 },
      (_request, _body, done) => done(null, {}),
    );
    scope.post('/logout', async (request, reply) => {
      const json = String(request.headers['content-type'] ?? '').startsWith('application/json');
      const allowed = json ? isSameOriginJson(request, config.publicUrl) : isSameOriginForm(request, config.publicUrl);
      if (!allowed) return reply.code(403).send({ message: 'Cross-site sign-out refused.' });
      await endSession(request, reply, site.sessions);
      return json ? reply.code(204).send() : reply.redirect('/', 303);
    });
  });
}

// Site sessions in signed, httpOnly, SameSite cookies (no server-side state), and the CSRF rule for
// every state-changing request: JSON only, from our own origin.
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../tokens/registry.ts';
import type { TelegramIdentity } from './telegram-auth.ts';

export const SESSION_COOKIE = 'tma_session';
const SESSION_SECONDS = 7 * 24 * 3600;

interface SessionData extends TelegramIdentity {
  exp: number;
}

export interface SiteUser extends TelegramIdentity {
  isAdmin: boolean;
}

export function startSession(reply: FastifyReply, identity: TelegramIdentity, secure: boolean): void {
  const data: SessionData = { id: identity.id, name: identity.name, exp: Math.floor(Date.now() / 1000) + SESSION_SECONDS };
  reply.setCookie(SESSION_COOKIE, Buffer.from(JSON.stringify(data)).toString('base64url'), {
    signed: true,
    httpOnly: true,
    sameSite: 'lax',
    secure,
    path: '/',
    maxAge: SESSION_SECONDS,
  });
}

export function endSession(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
}

export function sessionUser(request: FastifyRequest, admins: ReadonlySet<string>): SiteUser | null {
  const raw = request.cookies[SESSION_COOKIE];
  if (!raw) return null;
  const unsigned = request.unsignCookie(raw);
  if (!unsigned.valid || unsigned.value === null) return null;
  try {
    const data = JSON.parse(Buffer.from(unsigned.value, 'base64url').toString('utf8')) as SessionData;
    if (typeof data.id !== 'string' || data.exp < Date.now() / 1000) return null;
    return { id: data.id, name: data.name, isAdmin: admins.has(data.id) };
  } catch {
    return null;
  }
}

export function actorOf(user: SiteUser): Actor {
  return { surface: 'site', telegramId: user.id, isAdmin: user.isAdmin };
}

/**
 * CSRF: a cross-site page can neither send JSON without a CORS preflight (which the site never allows)
 * nor make the browser send our SameSite cookie; the Origin check closes what remains.
 */
export function isSameOriginJson(request: FastifyRequest, publicUrl: string | undefined): boolean {
  const type = String(request.headers['content-type'] ?? '');
  if (request.method !== 'DELETE' && !type.startsWith('application/json')) return false;
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    const { host } = new URL(origin);
    // behind a reverse proxy the Host header is the upstream's: PUBLIC_URL (or a trusted X-Forwarded-Host) says who we are
    return host === request.headers.host || host === request.host || (publicUrl !== undefined && host === new URL(publicUrl).host);
  } catch {
    return false;
  }
}

// Site sessions in signed, httpOnly cookies that name a server-side session (session-store.ts), and the
// CSRF rules for every state-changing request: JSON only, from our own origin (forms: Origin required).
import type {} from '@fastify/cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../tokens/registry.ts';
import { SESSION_SECONDS, type SiteSessions } from '../tokens/site-sessions.ts';
import type { TelegramIdentity } from './telegram-auth.ts';

export const SESSION_COOKIE = 'tma_session';

/** what the cookie says: which session, and for whom (the id is the user's own, shown back to them) */
interface CookieData extends TelegramIdentity {
  sid: string;
}

export interface SiteUser extends TelegramIdentity {
  isAdmin: boolean;
  /** the session began inside Telegram (Mini App mode): its pages may be framed by Telegram's web clients */
  miniApp: boolean;
}

export interface CookieOptions {
  /** the site is reached over https */
  secure: boolean;
  /**
   * Mini App mode: Telegram's web clients show the site in a frame, where only a SameSite=None cookie
   * is kept; Partitioned keeps it to that frame's top-level site (Telegram's).
   */
  miniApp: boolean;
}

export async function startSession(
  reply: FastifyReply,
  sessions: SiteSessions,
  identity: TelegramIdentity,
  options: CookieOptions,
): Promise<void> {
  const sid = await sessions.start(identity.id, { miniApp: options.miniApp });
  const data: CookieData = { sid, id: identity.id, name: identity.name };
  const framed = options.miniApp && options.secure;
  reply.setCookie(SESSION_COOKIE, Buffer.from(JSON.stringify(data)).toString('base64url'), {
    signed: true,
    httpOnly: true,
    sameSite: framed ? 'none' : 'lax',
    partitioned: framed,
    secure: options.secure,
    path: '/',
    maxAge: SESSION_SECONDS,
  });
}

function cookieData(request: FastifyRequest): CookieData | null {
  const raw = request.cookies[SESSION_COOKIE];
  if (!raw) return null;
  const unsigned = request.unsignCookie(raw);
  if (!unsigned.valid || unsigned.value === null) return null;
  try {
    const data = JSON.parse(Buffer.from(unsigned.value, 'base64url').toString('utf8')) as Partial<CookieData> | null;
    if (typeof data?.sid !== 'string' || typeof data.id !== 'string' || typeof data.name !== 'string') return null;
    return { sid: data.sid, id: data.id, name: data.name };
  } catch {
    return null;
  }
}

/** sign-out: the session ends on every node, whoever holds a copy of the cookie */
export async function endSession(request: FastifyRequest, reply: FastifyReply, sessions: SiteSessions): Promise<void> {
  const data = cookieData(request);
  if (data) await sessions.end(data.sid);
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
}

export async function sessionUser(
  request: FastifyRequest,
  sessions: SiteSessions,
  admins: ReadonlySet<string>,
): Promise<SiteUser | null> {
  const data = cookieData(request);
  if (!data) return null;
  const session = await sessions.find(data.sid, data.id);
  return session && { id: data.id, name: data.name, isAdmin: admins.has(data.id), miniApp: session.miniApp };
}

export function actorOf(user: SiteUser): Actor {
  return { surface: 'site', telegramId: user.id, isAdmin: user.isAdmin };
}

/** the Origin header names this site (behind a reverse proxy, PUBLIC_URL or a trusted X-Forwarded-Host say who we are) */
function isOwnOrigin(request: FastifyRequest, origin: string, publicUrl: string | undefined): boolean {
  try {
    const { host } = new URL(origin);
    return (
      host === request.headers.host ||
      host === request.host ||
      (publicUrl !== undefined && host === new URL(publicUrl).host)
    );
  } catch {
    return false;
  }
}

/**
 * CSRF: a cross-site page can neither send JSON without a CORS preflight (which the site never allows)
 * nor make the browser send our SameSite cookie; the Origin check closes what remains.
 */
export function isSameOriginJson(request: FastifyRequest, publicUrl: string | undefined): boolean {
  const type = String(request.headers['content-type'] ?? '');
  if (request.method !== 'DELETE' && !type.startsWith('application/json')) return false;
  const origin = request.headers.origin;
  return origin === undefined || isOwnOrigin(request, origin, publicUrl);
}

/** a plain form post: browsers always send Origin with one, so a missing Origin is refused */
export function isSameOriginForm(request: FastifyRequest, publicUrl: string | undefined): boolean {
  const origin = request.headers.origin;
  return origin !== undefined && isOwnOrigin(request, origin, publicUrl);
}

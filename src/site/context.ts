// What every site route needs: the services, who is signed in, and the bot's name for the login widget.
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Services } from '../services.ts';
import { LoginLinks } from '../tokens/login-links.ts';
import { SiteSessions } from '../tokens/site-sessions.ts';
import { sessionUser, type SiteUser } from './session.ts';
import { SingleUseProofs } from '../tokens/single-use.ts';

export interface SiteOptions {
  /** the management bot's username once known (for the Telegram Login Widget) */
  botUsername?: () => string | undefined;
}

export class SiteContext {
  readonly admins: ReadonlySet<string>;
  readonly loginLinks: LoginLinks;
  readonly sessions: SiteSessions;
  readonly usedProofs: SingleUseProofs;
  /** the public link's own rate limit (share-limit.ts), run before the link is looked up */
  shareLinkLimit: onRequestHookHandler = async () => {};
  /** each request's user, looked up once (the security headers need it before the handler runs) */
  private readonly users = new WeakMap<FastifyRequest, Promise<SiteUser | null>>();

  constructor(
    readonly services: Services,
    readonly options: SiteOptions,
  ) {
    this.admins = new Set(services.config.adminTelegramIds);
    this.loginLinks = new LoginLinks(services.store.prisma, services.secrets);
    this.sessions = new SiteSessions(services.store.prisma, (telegramId) => services.registry.ownerKey(telegramId));
    this.usedProofs = new SingleUseProofs(services.store.prisma);
  }

  get secureCookies(): boolean {
    return this.services.config.publicUrl?.startsWith('https://') ?? false;
  }

  user(request: FastifyRequest): Promise<SiteUser | null> {
    let user = this.users.get(request);
    if (!user) {
      user = sessionUser(request, this.sessions, this.admins);
      this.users.set(request, user);
    }
    return user;
  }

  /** for pages: the user, or a redirect to the sign-in page */
  async pageUser(request: FastifyRequest, reply: FastifyReply): Promise<SiteUser | null> {
    const user = await this.user(request);
    if (!user) void reply.redirect(`/login?next=${encodeURIComponent(request.url)}`);
    return user;
  }
}

// What every site route needs: the services, who is signed in, and the bot's name for the login widget.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services.ts';
import { LoginLinks } from './login-links.ts';
import { sessionUser, type SiteUser } from './session.ts';

export interface SiteOptions {
  /** the management bot's username once known (for the Telegram Login Widget) */
  botUsername?: () => string | undefined;
}

export class SiteContext {
  readonly admins: ReadonlySet<string>;
  readonly loginLinks: LoginLinks;

  constructor(
    readonly services: Services,
    readonly options: SiteOptions,
  ) {
    this.admins = new Set(services.config.adminTelegramIds);
    this.loginLinks = new LoginLinks(services.store.prisma, services.secrets);
  }

  get secureCookies(): boolean {
    return this.services.config.publicUrl?.startsWith('https://') ?? false;
  }

  user(request: FastifyRequest): SiteUser | null {
    return sessionUser(request, this.admins);
  }

  /** for pages: the user, or a redirect to the sign-in page */
  pageUser(request: FastifyRequest, reply: FastifyReply): SiteUser | null {
    const user = this.user(request);
    if (!user) void reply.redirect(`/login?next=${encodeURIComponent(request.url)}`);
    return user;
  }
}

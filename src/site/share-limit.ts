// The public link's own rate limit: its page and its dashboard reads together answer at most 60 requests a minute
// per link, counted before the link is looked up; secrets that cannot be links count against the client's address.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Services } from '../services.ts';

export const SHARE_LINK_REQUESTS_PER_MINUTE = 60;

export async function shareLinkLimit(app: FastifyInstance, services: Services): Promise<onRequestHookHandler> {
  await app.register(rateLimit, { global: false });
  return app.rateLimit({
    max: SHARE_LINK_REQUESTS_PER_MINUTE,
    timeWindow: 60_000,
    // hashed so no secret reaches memory dumps of the limiter
    keyGenerator: async (request: FastifyRequest) => {
      const { secret } = request.params as { secret?: unknown };
      const identity =
        typeof secret === 'string' && (await services.shareLinks.mayExist(secret))
          ? `link:${secret}`
          : `ip:${request.ip}`;
      return services.secrets.shortHash('share-link-rate-limit', identity);
    },
    errorResponseBuilder: (_request, context) =>
      Object.assign(
        new Error(
          `Too many requests for this link: at most ${SHARE_LINK_REQUESTS_PER_MINUTE} a minute. Try again in ${context.after}.`,
        ),
        { statusCode: 429 },
      ),
  });
}

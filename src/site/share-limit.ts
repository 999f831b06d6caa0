// The public link's own rate limit: its page and its dashboard reads together answer at most 60 requests a minute
// per link, counted before the link is looked up; secrets that cannot be links count against the client's address.
// A flood of made-up secrets from one client costs a screen check, a counter and a prebuilt 429 each.
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { lastKeyMemo, refusalPerWait } from '../platform/cheap-limits.ts';
import { HttpError } from '../platform/http-error.ts';
import type { Services } from '../services.ts';

export const SHARE_LINK_REQUESTS_PER_MINUTE = 60;

export async function shareLinkLimit(app: FastifyInstance, services: Services): Promise<onRequestHookHandler> {
  // hashed so no secret reaches memory dumps of the limiter (nor the memo: a link's secret is hashed each time)
  const hash = (identity: string) => services.secrets.shortHash('share-link-rate-limit', identity);
  const addressKey = lastKeyMemo(hash);
  const refusal = refusalPerWait(
    (after) =>
      new HttpError(429, {
        message: `Too many requests for this link: at most ${SHARE_LINK_REQUESTS_PER_MINUTE} a minute. Try again in ${after}.`,
      }),
  );
  await app.register(rateLimit, { global: false });
  return app.rateLimit({
    max: SHARE_LINK_REQUESTS_PER_MINUTE,
    timeWindow: 60_000,
    keyGenerator: async (request: FastifyRequest) => {
      const { secret } = request.params as { secret?: unknown };
      if (typeof secret === 'string' && (await services.shareLinks.mayExist(secret))) return hash(`link:${secret}`);
      return addressKey(`ip:${request.ip}`);
    },
    errorResponseBuilder: (_request, context) => refusal(context.after),
  });
}

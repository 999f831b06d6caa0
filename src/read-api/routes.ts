// The read API (/api/v1/apps/{app}/…) as one Fastify plugin: an app's insights as JSON for the integrator's own
// tools, read with a per-app key (Authorization: Bearer tma_read_…), rate limited per key, described in /openapi.json.
import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsync, FastifyRequest, FastifySchemaValidationError } from 'fastify';
import type { Period } from '../events/days.ts';
import type { FilterQuery } from '../events/read/filters.ts';
import { refused } from '../platform/http-error.ts';
import { InsightsReader, MAX_FUNNEL_STEPS } from '../events/read/insights.ts';
import { parameterOf, parameterProblem } from '../platform/parameter-schema.ts';
import { lastKeyMemo, refusalPerWait } from '../platform/cheap-limits.ts';
import type { Services } from '../services.ts';
import { bearerCredential } from '../tokens/format.ts';
import type { ReadKeyGrant } from '../tokens/read-keys.ts';
import { filterOf, funnelOf, parsePeriod } from './parameters.ts';
import { READ_API_SCHEMAS } from './schemas.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** the app the request's read key reads, once checked */
    readGrant: ReadKeyGrant | null;
  }
}

type PeriodQuery = { from?: string; to?: string } & FilterQuery;
type AppRequest<Query = PeriodQuery, Params = object> = FastifyRequest<{
  Params: { app: string } & Params;
  Querystring: Query;
}>;

function formatErrors(errors: FastifySchemaValidationError[], dataVar: string): Error {
  const [error] = errors;
  const place = dataVar === 'querystring' ? 'query parameter' : 'path parameter';
  return refused(400, `The ${place} "${parameterOf(error)}" ${parameterProblem(error)}.`);
}

/** one answer for every request without a working key: a flood of made-up keys builds no Error per request */
const KEY_REQUIRED = refused(
  401,
  'A read key is required: send "Authorization: Bearer tma_read_…" with a key of this app (from the bot, the site or the CLI).',
);

export const readApiRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const insights = new InsightsReader(services.store.reads);
  const hash = (identity: string) => services.secrets.shortHash('read-api-rate-limit', identity);
  const addressKey = lastKeyMemo(hash);
  const max = services.config.readApiRateLimitMax;
  const refusal = refusalPerWait((after) =>
    refused(429, `Too many requests: at most ${max} a minute. Try again in ${after}.`),
  );

  await app.register(rateLimit, {
    global: true,
    max,
    timeWindow: 60_000,
    // one counter per key (however its header is spelt), hashed so no key reaches memory dumps of the limiter; a
    // missing, malformed or made-up key counts against the client's address, so guessing is limited per client (a key
    // is hashed each time; the memo holds only the last address)
    keyGenerator: async (request) => {
      const key = bearerCredential(request.headers.authorization);
      if (key !== undefined && (await services.readKeys.mayBeIssued(key))) return hash(`key:${key}`);
      return addressKey(`ip:${request.ip}`);
    },
    errorResponseBuilder: (_request, context) => refusal(context.after),
  });

  app.decorateRequest('readGrant', null);
  // after the rate limit (a route's onRequest hook), so a flood of made-up keys is counted before it costs anything
  app.addHook('preValidation', async (request: AppRequest) => {
    const key = bearerCredential(request.headers.authorization);
    const grant = key === undefined ? null : await services.readKeys.authenticate(key);
    if (!grant) throw KEY_REQUIRED;
    if (grant.appName !== request.params.app) throw refused(403, 'This read key does not read this app.');
    request.readGrant = grant;
  });

  const options = (schema: object) => ({ schema, schemaErrorFormatter: formatErrors });
  const appId = (request: FastifyRequest) => request.readGrant!.appId;

  /** the answer of a read over the request's period, which it names */
  const over = async <T extends object>(query: PeriodQuery, read: (period: Period) => Promise<T>) => {
    const period = parsePeriod(query);
    return { period, ...(await read(period)) };
  };

  app.get('/api/v1/apps/:app/summary', options(READ_API_SCHEMAS.summary), async (request: AppRequest) =>
    over(request.query, (period) => insights.summary(appId(request), period, filterOf(request.query))),
  );

  app.get('/api/v1/apps/:app/retention', options(READ_API_SCHEMAS.retention), async (request: AppRequest) =>
    over(request.query, (period) => insights.retention(appId(request), period, filterOf(request.query))),
  );

  app.get(
    '/api/v1/apps/:app/funnel',
    options(READ_API_SCHEMAS.funnel),
    async (request: AppRequest<PeriodQuery & { steps?: string; by?: string; window?: string }>) =>
      over(request.query, (period) =>
        insights.funnel(appId(request), period, funnelOf(request.query, MAX_FUNNEL_STEPS), filterOf(request.query)),
      ),
  );

  app.get('/api/v1/apps/:app/custom-events', options(READ_API_SCHEMAS.customEvents), async (request: AppRequest) =>
    over(request.query, (period) => insights.customEvents(appId(request), period, filterOf(request.query))),
  );

  app.get(
    '/api/v1/apps/:app/custom-events/:name/properties/:property',
    options(READ_API_SCHEMAS.customProperty),
    async (request: AppRequest<PeriodQuery, { name: string; property: string }>) =>
      over(request.query, (period) =>
        insights.customPropertyValues(
          appId(request),
          period,
          request.params.name,
          request.params.property,
          filterOf(request.query),
        ),
      ),
  );

  app.get('/api/v1/apps/:app/campaigns', options(READ_API_SCHEMAS.campaigns), async (request: AppRequest) =>
    over(request.query, (period) => insights.campaigns(appId(request), period, filterOf(request.query))),
  );

  app.get('/api/v1/apps/:app/revenue', options(READ_API_SCHEMAS.revenue), async (request: AppRequest) =>
    over(request.query, (period) => insights.revenue(appId(request), period, filterOf(request.query))),
  );
};

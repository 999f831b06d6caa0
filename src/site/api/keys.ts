// An app's read keys (the read API) and server keys (POST /events from the app's own bot) under /api/apps/:name:
// the same three routes for both kinds: list, create (the key is shown once), revoke by the listed prefix.
import type { FastifyPluginAsync } from 'fastify';
import { refused } from '../../platform/http-error.ts';
import { givenReadKey, readKeyDocument } from '../../tokens/read-keys.ts';
import type { SiteContext } from '../context.ts';
import { actorOfRequest, type NamedApp, nameOnly } from './requests.ts';

export const keyRoutes: FastifyPluginAsync<{ site: SiteContext }> = async (api, { site }) => {
  const { readKeys, serverKeys } = site.services;
  for (const [route, keys] of [
    ['/read-keys', readKeys],
    ['/server-keys', serverKeys],
  ] as const) {
    const { noun, prefix: kindPrefix } = keys.kind;
    api.get<NamedApp>(route, nameOnly, async (request) =>
      (await keys.list(request.params.name, actorOfRequest(request))).map(readKeyDocument),
    );

    api.post<NamedApp>(route, nameOnly, async (request, reply) => {
      const { key, readKey } = await keys.create(request.params.name, actorOfRequest(request));
      reply.code(201);
      return { key, prefix: readKey.prefix, app_name: readKey.appName, created_at: readKey.createdAt.toISOString() };
    });

    api.post<NamedApp & { Body: { prefix?: unknown } }>(`${route}/revoke`, nameOnly, async (request) => {
      const prefix = request.body?.prefix;
      if (typeof prefix !== 'string' || givenReadKey(prefix, kindPrefix) === null)
        throw refused(
          400,
          `Send the ${noun}'s prefix as listed: ${kindPrefix} and at least 4 more characters.`,
          'prefix',
        );
      // only the keys of the app in the path: a prefix of another app's key is not found here
      return readKeyDocument(await keys.revoke(prefix, actorOfRequest(request), { appName: request.params.name }));
    });
  }
};

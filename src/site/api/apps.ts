// The Analytics section's apps under /api/apps: list, create, show, revoke, regenerate, edit domains, delete; with
// the bot's rules and messages (the registry decides, a refusal answers with its status).
import type { FastifyPluginAsync } from 'fastify';
import { refused } from '../../platform/http-error.ts';
import { parseAppName, parseBotAddress, parseBotId, parseDomain } from '../../tokens/inputs.ts';
import type { SiteContext } from '../context.ts';
import { fields, text, validated } from '../schemas.ts';
import { appDocuments } from './app-documents.ts';
import { accepted, actorOfRequest, appOf, type NamedApp, nameOnly, userOf } from './requests.ts';

export const appRoutes: FastifyPluginAsync<{ site: SiteContext }> = async (api, { site }) => {
  const { services } = site;
  const { registry } = services;
  const documents = appDocuments(services);
  const domainOf = (input: string) =>
    accepted(parseDomain(input, { allowLocalhost: services.config.allowLocalhostDomains }), 'domain');

  api.get<{ Querystring: { all?: string } }>(
    '',
    // each app's last event and whether its first arrived
    { ...validated({ querystring: fields({ all: text(8) }) }), config: { fresh: true } },
    async (request) => {
      const user = userOf(request);
      const actor = actorOfRequest(request);
      const everyone = request.query.all === '1' && user.isAdmin;
      return documents.all(await registry.listApps(everyone ? actor : { ...actor, isAdmin: false }));
    },
  );

  /** a bot id as a form sends it: absent or empty is none */
  const botIdOf = (input: unknown) =>
    input === undefined || input === null || input === '' ? null : accepted(parseBotId(String(input)), 'bot_id');

  /** the catalog choice as a request sends it: true or false, nothing else */
  const listedOf = (input: unknown, required: boolean) => {
    if (input === true || input === false) return input;
    if (input === undefined && !required) return undefined;
    throw refused(
      400,
      'Send {"catalog_listed": true} to list the app in the public catalog, or false.',
      'catalog_listed',
    );
  };

  api.post<{ Body: { bot?: string; bot_id?: string; domain?: string; app_name?: string; catalog_listed?: unknown } }>(
    '',
    async (request, reply) => {
      const body = request.body ?? {};
      const { token, app: created } = await registry.createApp(
        {
          bot: accepted(parseBotAddress(String(body.bot ?? '')), 'bot'),
          botId: botIdOf(body.bot_id),
          domains: [domainOf(String(body.domain ?? ''))],
          appName: accepted(parseAppName(String(body.app_name ?? '')), 'app_name'),
          ownerTelegramId: userOf(request).id,
          catalogListed: listedOf(body.catalog_listed, false),
        },
        actorOfRequest(request),
      );
      reply.code(201);
      return { token, ...(await documents.one(created)) };
    },
  );

  api.get<NamedApp>('/:name', { ...nameOnly, config: { permission: 'view', fresh: true } }, async (request) =>
    documents.one(appOf(request)),
  );

  api.post<NamedApp>('/:name/revoke', nameOnly, async (request) =>
    documents.one(await registry.revoke(request.params.name, actorOfRequest(request))),
  );

  api.post<NamedApp>('/:name/regenerate', nameOnly, async (request) => {
    const { token, app: renewed } = await registry.regenerate(request.params.name, actorOfRequest(request));
    return { token, ...(await documents.one(renewed)) };
  });

  api.post<NamedApp & { Body: { add?: string; remove?: string } }>('/:name/domains', nameOnly, async (request) => {
    const actor = actorOfRequest(request);
    const { add, remove } = request.body ?? {};
    if (typeof add === 'string')
      return documents.one(await registry.addDomain(request.params.name, domainOf(add), actor));
    if (typeof remove === 'string')
      return documents.one(await registry.removeDomain(request.params.name, remove, actor));
    throw refused(400, 'Send {"add": "<domain>"} or {"remove": "<domain>"}.', 'domain');
  });

  // the bot's numeric id, which Telegram signs the app's launches for ({"bot_id": null} forgets it)
  api.post<NamedApp & { Body: { bot_id?: unknown } }>('/:name/bot-id', nameOnly, async (request) => {
    const body = request.body;
    if (typeof body !== 'object' || body === null || !('bot_id' in body))
      throw refused(400, 'Send {"bot_id": "<the number before : in the bot\'s token>"} or {"bot_id": null}.', 'bot_id');
    return documents.one(await registry.setBotId(request.params.name, botIdOf(body.bot_id), actorOfRequest(request)));
  });

  // the owner's choice: the app is in the public catalog, or not
  api.post<NamedApp & { Body: { catalog_listed?: unknown } }>('/:name/catalog', nameOnly, async (request) =>
    documents.one(
      await registry.setCatalogListed(
        request.params.name,
        listedOf(request.body?.catalog_listed, true)!,
        actorOfRequest(request),
      ),
    ),
  );

  api.delete<NamedApp>('/:name', nameOnly, async (request, reply) => {
    await registry.deleteApp(request.params.name, actorOfRequest(request));
    return reply.code(204).send();
  });
};

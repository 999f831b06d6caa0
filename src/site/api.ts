// The site's JSON API under /api: the Analytics section (create, list, revoke, regenerate, edit domains,
// delete, read keys, data controls, the team) with the bot's rules and messages, the per-app dashboard, live events
// and exports, and ending a user's sessions (administrators). Every app route authorises through
// registry.authorize (src/tokens/policy.ts): a member's role too small answers 403, a stranger 404.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { alertSettingsDocument, parseAlertSettings } from '../alerts/subscriptions.ts';
import { ReadBudgetError } from '../db/read-budget.ts';
import { type AppSummary, appSummaries, appSummary, appSummaryDocument } from '../events/app-summary.ts';
import { erasureDocument, retentionDocument } from '../events/data-controls.ts';
import { type Filter, type FilterQuery, parseFilter } from '../events/filters.ts';
import { parseFunnelQuery } from '../events/funnel-query.ts';
import { InsightsReader, MAX_FUNNEL_STEPS } from '../events/insights.ts';
import { parseRetention } from '../events/retention.ts';
import { lastDays, RollupReader, type ExportRow, type Period } from '../events/rollups.ts';
import { SavedFunnels } from '../events/saved-funnels.ts';
import { parseAppName, parseBotAddress, parseDomain, parseTelegramUserId } from '../tokens/inputs.ts';
import { makerDocument } from '../tokens/makers.ts';
import { inviteLink, isMemberRole, memberDocument } from '../tokens/members.ts';
import type { Permission } from '../tokens/policy.ts';
import { givenReadKey, readKeyDocument } from '../tokens/read-keys.ts';
import { type ShareLinkInfo, sharePath } from '../tokens/share-links.ts';
import { RegistryError, type AppRecord } from '../tokens/registry.ts';
import type { SiteContext } from './context.ts';
import { appNameParams, fields, text, validated } from './schemas.ts';
import { actorOf, isSameOriginJson, type SiteUser } from './session.ts';

class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

const REGISTRY_STATUS: Record<RegistryError['code'], number> = {
  app_exists: 409,
  app_not_found: 404,
  domain_exists: 409,
  domain_not_found: 404,
  last_domain: 409,
  not_allowed: 403,
  forbidden: 403,
  invite_not_found: 404,
  invite_used: 410,
  invite_expired: 410,
  member_not_found: 404,
  own_app: 409,
  team_changed: 409,
  key_not_found: 404,
  key_ambiguous: 409,
  key_revoked: 409,
  key_limit: 409,
};

function accepted<T>(parsed: { ok: true; value: T } | { ok: false; error: string }, field: string): T {
  if (!parsed.ok) throw new ApiError(400, parsed.error, field);
  return parsed.value;
}

function periodOf(query: { days?: string }): Period {
  const days = Number(query.days ?? 30);
  if (![7, 30, 90].includes(days)) throw new ApiError(400, 'days must be 7, 30 or 90', 'days');
  return lastDays(days);
}

function filterOf(query: FilterQuery): Filter {
  return accepted(parseFilter(query), 'filter');
}

/** the dashboard's query: the period in days and the filter */
type ViewQuery = FilterQuery & { days?: string };

const CSV_COLUMNS = [
  'received_at',
  'occurred_at',
  'event_name',
  'session_id',
  'user',
  'platform',
  'locale',
  'start_param',
  'is_premium',
  'is_success',
  'props',
];

/** a spreadsheet runs a cell starting with one of these as a formula (values come from mini app users) */
const FORMULA_START = /^[=+\-@\t\r]/;
/**
 * characters a spreadsheet may split a line on (its locale's separator, tab, pipe), besides the comma, and the line
 * breaks a quoted cell may hold: one that splits lines before honouring quotes starts a cell after them
 */
const SEPARATOR = /[,;\t|\r\n]/;
const FORMULA_AFTER_SEPARATOR = /([,;\t|\r\n])(?=[=+\-@\t\r])/g;

/**
 * JSON whose strings never hold a formula start right after a separator: those characters are written as
 * \u escapes, so the text is the same JSON and no split can start a cell with them (outside strings JSON
 * has only numbers, which cannot form a formula).
 */
function inertJson(value: unknown): string {
  const json = JSON.stringify(value);
  let out = '';
  let inString = false;
  let escaped = false;
  let previous = '';
  for (const char of json) {
    if (inString && !escaped && '=+-@'.includes(char) && SEPARATOR.test(previous))
      out += `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
    else out += char;
    if (escaped) escaped = false;
    else if (char === '\\') escaped = inString;
    else if (char === '"') inString = !inString;
    previous = char;
  }
  return out;
}

/** every text cell quoted; no formula can start the cell or anything a separator could split off */
export function csvCell(value: unknown): string {
  if (typeof value === 'boolean') return String(value);
  let text =
    typeof value === 'object' && value !== null
      ? inertJson(value)
      : String(value ?? '').replace(FORMULA_AFTER_SEPARATOR, "$1'");
  if (FORMULA_START.test(text)) text = `'${text}`;
  return `"${text.replace(/"/g, '""')}"`;
}

function exportRecord(row: ExportRow) {
  return {
    received_at: row.receivedAt.toISOString(),
    occurred_at: row.occurredAt.toISOString(),
    event_name: row.eventName,
    session_id: row.sessionId,
    user: row.user,
    platform: row.platform,
    locale: row.locale,
    start_param: row.startParam,
    is_premium: row.isPremium,
    is_success: row.isSuccess,
    props: row.props,
  };
}

export function registerApi(app: FastifyInstance, site: SiteContext): void {
  const { services } = site;
  const { registry, readKeys, serverKeys, dataControls, members } = services;
  const rollups = new RollupReader(services.store.reads);
  const insights = new InsightsReader(services.store.reads);
  const funnels = new SavedFunnels(services.store.prisma);

  const appDocument = (record: AppRecord, activity: AppSummary) => ({
    app_name: record.appName,
    bot: record.bot,
    domains: record.domains,
    role: record.role,
    token_prefix: record.tokenPrefix,
    created_at: record.createdAt.toISOString(),
    ...appSummaryDocument(activity),
  });
  const summary = async (record: AppRecord) => appDocument(record, await appSummary(services, record.appId));
  /** the apps as the site lists them: their summaries read together */
  const summaries = async (records: AppRecord[]) => {
    const read = await appSummaries(
      services,
      records.map((record) => record.appId),
    );
    return records.map((record) => appDocument(record, read.get(record.appId)!));
  };

  /** every /api route: a signed-in user, and for writes a same-origin JSON request */
  const guard = async (request: FastifyRequest): Promise<SiteUser> => {
    const user = await site.user(request);
    if (!user) throw new ApiError(401, 'Sign in first.');
    if (request.method !== 'GET' && !isSameOriginJson(request, services.config.publicUrl))
      throw new ApiError(403, 'Cross-site or non-JSON request refused.');
    return user;
  };

  /** the app in the path, when the signed-in user's role allows the permission */
  const appFor = async (request: FastifyRequest<{ Params: { name: string } }>, permission: Permission) =>
    registry.authorize({ appName: request.params.name }, actorOf(await guard(request)), permission);

  app.register(async (api) => {
    // what the user's app just sent is in what the API reads
    api.addHook('preHandler', async (request) => {
      if (request.method === 'GET') await services.caughtUp();
    });
    api.setErrorHandler((error: Error & { statusCode?: number }, request, reply: FastifyReply) => {
      if (error instanceof ApiError)
        return reply
          .code(error.status)
          .send({ message: error.message, ...(error.field ? { field: error.field } : {}) });
      if (error instanceof RegistryError)
        return reply.code(REGISTRY_STATUS[error.code]).send({ message: error.message });
      if (error instanceof ReadBudgetError) return reply.code(503).send({ message: error.message });
      if (error.statusCode && error.statusCode < 500)
        return reply.code(error.statusCode).send({ message: error.message });
      request.log.error({ err: error }, 'site api failed');
      return reply.code(500).send({ message: 'Something went wrong. Please try again.' });
    });

    const nameOnly = validated({ params: appNameParams });
    const VIEW = { days: text(8), platform: text(64), language: text(64), premium: text(8), campaign: text(64) };
    const nameAndDays = validated({ params: appNameParams, querystring: fields(VIEW) });

    api.get('/api/me', async (request) => {
      const user = await guard(request);
      return { name: user.name, is_admin: user.isAdmin };
    });

    api.get<{ Querystring: { all?: string } }>(
      '/api/apps',
      validated({ querystring: fields({ all: text(8) }) }),
      async (request) => {
        const user = await guard(request);
        const actor = actorOf(user);
        const everyone = request.query.all === '1' && user.isAdmin;
        const apps = await registry.listApps(everyone ? actor : { ...actor, isAdmin: false });
        return summaries(apps);
      },
    );

    api.post<{ Body: { bot?: string; domain?: string; app_name?: string } }>('/api/apps', async (request, reply) => {
      const user = await guard(request);
      const body = request.body ?? {};
      const { token, app: created } = await registry.createApp(
        {
          bot: accepted(parseBotAddress(String(body.bot ?? '')), 'bot'),
          domains: [
            accepted(
              parseDomain(String(body.domain ?? ''), { allowLocalhost: services.config.allowLocalhostDomains }),
              'domain',
            ),
          ],
          appName: accepted(parseAppName(String(body.app_name ?? '')), 'app_name'),
          ownerTelegramId: user.id,
        },
        actorOf(user),
      );
      reply.code(201);
      return { token, ...(await summary(created)) };
    });

    api.get<{ Params: { name: string } }>('/api/apps/:name', nameOnly, async (request) =>
      summary(await appFor(request, 'view')),
    );

    api.post<{ Params: { name: string } }>('/api/apps/:name/revoke', nameOnly, async (request) =>
      summary(await registry.revoke(request.params.name, actorOf(await guard(request)))),
    );

    api.post<{ Params: { name: string } }>('/api/apps/:name/regenerate', nameOnly, async (request) => {
      const { token, app: renewed } = await registry.regenerate(request.params.name, actorOf(await guard(request)));
      return { token, ...(await summary(renewed)) };
    });

    api.post<{ Params: { name: string }; Body: { add?: string; remove?: string } }>(
      '/api/apps/:name/domains',
      nameOnly,
      async (request) => {
        const actor = actorOf(await guard(request));
        const { add, remove } = request.body ?? {};
        if (typeof add === 'string') {
          const domain = accepted(
            parseDomain(add, { allowLocalhost: services.config.allowLocalhostDomains }),
            'domain',
          );
          return summary(await registry.addDomain(request.params.name, domain, actor));
        }
        if (typeof remove === 'string') return summary(await registry.removeDomain(request.params.name, remove, actor));
        throw new ApiError(400, 'Send {"add": "<domain>"} or {"remove": "<domain>"}.', 'domain');
      },
    );

    api.delete<{ Params: { name: string } }>('/api/apps/:name', nameOnly, async (request, reply) => {
      await registry.deleteApp(request.params.name, actorOf(await guard(request)));
      return reply.code(204).send();
    });

    // read keys (the read API) and server keys (POST /events from the app's own bot): the same three routes
    for (const [route, keys] of [
      ['read-keys', readKeys],
      ['server-keys', serverKeys],
    ] as const) {
      const { noun, prefix: kindPrefix } = keys.kind;
      api.get<{ Params: { name: string } }>(`/api/apps/:name/${route}`, nameOnly, async (request) =>
        (await keys.list(request.params.name, actorOf(await guard(request)))).map(readKeyDocument),
      );

      api.post<{ Params: { name: string } }>(`/api/apps/:name/${route}`, nameOnly, async (request, reply) => {
        const { key, readKey } = await keys.create(request.params.name, actorOf(await guard(request)));
        reply.code(201);
        return { key, prefix: readKey.prefix, app_name: readKey.appName, created_at: readKey.createdAt.toISOString() };
      });

      api.post<{ Params: { name: string }; Body: { prefix?: unknown } }>(
        `/api/apps/:name/${route}/revoke`,
        nameOnly,
        async (request) => {
          const actor = actorOf(await guard(request));
          const prefix = request.body?.prefix;
          if (typeof prefix !== 'string' || givenReadKey(prefix, kindPrefix) === null) {
            throw new ApiError(
              400,
              `Send the ${noun}'s prefix as listed: ${kindPrefix} and at least 4 more characters.`,
              'prefix',
            );
          }
          // only the keys of the app in the path: a prefix of another app's key is not found here
          return readKeyDocument(await keys.revoke(prefix, actor, { appName: request.params.name }));
        },
      );
    }

    // the app's public read-only link: its secret is shown when made, never again
    const shareDocument = (info: ShareLinkInfo | null) =>
      info === null
        ? { link: null }
        : {
            link: {
              prefix: info.prefix,
              created_at: info.createdAt.toISOString(),
              made_by: makerDocument(info.madeBy),
            },
          };
    api.get<{ Params: { name: string } }>('/api/apps/:name/share', nameOnly, async (request) =>
      shareDocument(await services.shareLinks.current(request.params.name, actorOf(await guard(request)))),
    );
    api.post<{ Params: { name: string } }>('/api/apps/:name/share', nameOnly, async (request, reply) => {
      const { secret, info } = await services.shareLinks.create(request.params.name, actorOf(await guard(request)));
      reply.code(201);
      return { ...shareDocument(info), url: `${services.config.publicUrl ?? ''}${sharePath(secret)}` };
    });
    api.delete<{ Params: { name: string } }>('/api/apps/:name/share', nameOnly, async (request, reply) => {
      const revoked = await services.shareLinks.revoke(request.params.name, actorOf(await guard(request)));
      if (!revoked) throw new ApiError(404, 'This app has no public link.');
      return reply.code(204).send();
    });

    // the dashboard a public link opens: its numbers only, no token, domains, refusals or events
    api.get<{ Params: { secret: string }; Querystring: ViewQuery }>(
      '/api/share/:secret/dashboard',
      {
        ...validated({ params: fields({ secret: text(64) }), querystring: fields(VIEW) }),
        onRequest: site.shareLinkLimit,
      },
      async (request) => {
        const shared = await services.shareLinks.resolve(request.params.secret);
        if (!shared) throw new ApiError(404, 'This link does not exist or was revoked.');
        const [dashboard, activity] = await Promise.all([
          rollups.dashboard(shared.appId, periodOf(request.query), filterOf(request.query)),
          services.events.activities([shared.appId]).then((read) => read.get(shared.appId)!),
        ]);
        return {
          app: { app_name: shared.appName, last_event_at: activity.lastEventAt?.toISOString() ?? null },
          ...dashboard,
          rejections: [],
        };
      },
    );

    // what the bot tells the signed-in user about the app (their private chat with the bot has their id)
    api.get<{ Params: { name: string } }>('/api/apps/:name/alerts', nameOnly, async (request) => {
      const user = await guard(request);
      const app = await registry.authorize({ appName: request.params.name }, actorOf(user), 'view');
      return alertSettingsDocument(await services.alertSubscriptions.subscribe(app.appId, user.id));
    });

    api.post<{ Params: { name: string }; Body: unknown }>('/api/apps/:name/alerts', nameOnly, async (request) => {
      const user = await guard(request);
      const app = await registry.authorize({ appName: request.params.name }, actorOf(user), 'view');
      const settings = accepted(parseAlertSettings(request.body), 'alerts');
      const subscription = await services.alertSubscriptions.subscribe(app.appId, user.id);
      const changed = await services.alertSubscriptions.change(subscription.id, user.id, settings);
      return alertSettingsDocument(changed ?? subscription);
    });

    // the app's data controls: its retention period, and erasing one user's data (a data protection request)
    api.get<{ Params: { name: string } }>('/api/apps/:name/data-controls', nameOnly, async (request) =>
      retentionDocument(await dataControls.retention(request.params.name, actorOf(await guard(request)))),
    );

    api.post<{ Params: { name: string }; Body: { days?: unknown } }>(
      '/api/apps/:name/retention',
      nameOnly,
      async (request) => {
        const actor = actorOf(await guard(request));
        const days = accepted(parseRetention(request.body?.days), 'days');
        return retentionDocument(await dataControls.setRetention(request.params.name, days, actor));
      },
    );

    // the id travels in the body, never in a URL a log could keep
    api.post<{ Params: { name: string }; Body: { telegram_user_id?: unknown } }>(
      '/api/apps/:name/users/erase',
      nameOnly,
      async (request) => {
        const actor = actorOf(await guard(request));
        const telegramUserId = accepted(parseTelegramUserId(request.body?.telegram_user_id), 'telegram_user_id');
        // what this node accepted of the user's events is stored first, so the erase covers it too
        await services.caughtUp();
        return erasureDocument(await dataControls.eraseUser(request.params.name, telegramUserId, actor));
      },
    );

    api.get<{ Params: { name: string }; Querystring: ViewQuery }>(
      '/api/apps/:name/dashboard',
      nameAndDays,
      async (request) => {
        const record = await appFor(request, 'view');
        const [dashboard, rejections] = await Promise.all([
          rollups.dashboard(record.appId, periodOf(request.query), filterOf(request.query)),
          services.rejections.recent(record.appId, 20),
        ]);
        return {
          app: await summary(record),
          ...dashboard,
          rejections: rejections.map(({ appId: _appId, ...rejection }) => rejection),
        };
      },
    );

    // the insight cards: what the read API answers, for the signed-in owner, with the dashboard's period and filter
    api.get<{ Params: { name: string }; Querystring: ViewQuery }>(
      '/api/apps/:name/insights',
      nameAndDays,
      async (request) => {
        const record = await appFor(request, 'view');
        const [period, filter] = [periodOf(request.query), filterOf(request.query)];
        const [summary, retention, custom, campaigns, revenue] = await Promise.all([
          insights.summary(record.appId, period, filter),
          insights.retention(record.appId, period, filter),
          insights.customEvents(record.appId, period, filter),
          insights.campaigns(record.appId, period, filter),
          insights.revenue(record.appId, period, filter),
        ]);
        return { period, summary, retention, custom_events: custom.events, campaigns: campaigns.campaigns, revenue };
      },
    );

    api.get<{ Params: { name: string }; Querystring: ViewQuery & { steps?: string; by?: string; window?: string } }>(
      '/api/apps/:name/funnel',
      validated({
        params: appNameParams,
        querystring: fields({ ...VIEW, steps: text(1024), by: text(16), window: text(16) }),
      }),
      async (request) => {
        const record = await appFor(request, 'view');
        const query = accepted(parseFunnelQuery(request.query, MAX_FUNNEL_STEPS), 'steps');
        return insights.funnel(record.appId, periodOf(request.query), query, filterOf(request.query));
      },
    );

    // the app's funnels: the default wallet funnel, then those its owner saved (saving a name again edits it)
    api.get<{ Params: { name: string } }>('/api/apps/:name/funnels', nameOnly, async (request) => {
      const record = await appFor(request, 'view');
      return funnels.list(record.appId);
    });

    api.post<{ Params: { name: string }; Body: Record<string, unknown> }>(
      '/api/apps/:name/funnels',
      nameOnly,
      async (request, reply) => {
        const record = await appFor(request, 'save-funnels');
        const saved = await funnels.save(record.appId, request.body ?? {});
        if (!saved.ok) throw new ApiError(400, saved.error, saved.field);
        reply.code(201);
        return saved.funnel;
      },
    );

    api.delete<{ Params: { name: string; id: string } }>(
      '/api/apps/:name/funnels/:id',
      validated({
        params: {
          ...appNameParams,
          required: ['name', 'id'],
          properties: { ...appNameParams.properties, id: { type: 'string', pattern: '^[0-9]{1,9}$' } },
        },
      }),
      async (request, reply) => {
        const record = await appFor(request, 'save-funnels');
        if (!(await funnels.delete(record.appId, Number(request.params.id))))
          throw new ApiError(404, 'This app has no such funnel.');
        return reply.code(204).send();
      },
    );

    api.get<{ Params: { name: string; event: string; property: string }; Querystring: ViewQuery }>(
      '/api/apps/:name/custom-events/:event/properties/:property',
      validated({
        params: {
          ...appNameParams,
          required: ['name', 'event', 'property'],
          properties: { ...appNameParams.properties, event: text(256), property: text(256) },
        },
        querystring: fields(VIEW),
      }),
      async (request) => {
        const record = await appFor(request, 'view');
        const { event, property } = request.params;
        const period = periodOf(request.query);
        return insights.customPropertyValues(record.appId, period, event, property, filterOf(request.query));
      },
    );

    api.get<{ Params: { name: string }; Querystring: ViewQuery }>(
      '/api/apps/:name/recent',
      nameAndDays,
      async (request) => {
        const record = await appFor(request, 'view');
        return rollups.recent(record.appId, 25, filterOf(request.query));
      },
    );

    const exportSchema = validated({
      params: {
        ...appNameParams,
        required: ['name', 'format'],
        properties: { ...appNameParams.properties, format: text(16) },
      },
      querystring: fields(VIEW),
    });
    api.get<{ Params: { name: string; format: string }; Querystring: ViewQuery }>(
      '/api/apps/:name/export.:format',
      exportSchema,
      async (request, reply) => {
        const record = await appFor(request, 'view');
        const format = request.params.format;
        if (format !== 'csv' && format !== 'ndjson') throw new ApiError(404, 'Export as .csv or .ndjson.');
        const [period, filter] = [periodOf(request.query), filterOf(request.query)];
        const batches = rollups.export(record.appId, period, filter)[Symbol.asyncIterator]();
        // the first rows are read before the status is sent: a store that fails at once gets an error answer
        let batch = await batches.next();
        reply.raw.writeHead(200, {
          'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
          'content-disposition': `attachment; filename="${record.appName}-${period.from}-${period.to}.${format}"`,
        });
        if (format === 'csv') reply.raw.write(CSV_COLUMNS.join(',') + '\n');
        try {
          for (; !batch.done; batch = await batches.next()) {
            const lines = batch.value.map((row) => {
              const record = exportRecord(row);
              return format === 'csv'
                ? CSV_COLUMNS.map((column) => csvCell(record[column as keyof typeof record])).join(',')
                : JSON.stringify(record);
            });
            if (!reply.raw.write(lines.join('\n') + '\n'))
              await new Promise((resolve) => reply.raw.once('drain', resolve));
          }
        } catch (error) {
          // the status is sent: a cut connection (no last chunk) is how the client learns the file is incomplete
          request.log.error({ err: error }, 'export cut short');
          reply.raw.destroy();
          return reply;
        }
        reply.raw.end();
        return reply;
      },
    );

    // the app's team: the owner and members with their roles (owner and editors), invites as bot deep links (owner),
    // removing a member (the owner; a member removes themselves, or "me", to leave) and handing the app over (owner)
    api.get<{ Params: { name: string } }>('/api/apps/:name/members', nameOnly, async (request) => {
      const { app: record, members: listed } = await members.list(request.params.name, actorOf(await guard(request)));
      return { app_name: record.appName, role: record.role, members: listed.map(memberDocument) };
    });

    api.post<{ Params: { name: string }; Body: { role?: unknown } }>(
      '/api/apps/:name/invites',
      nameOnly,
      async (request, reply) => {
        const actor = actorOf(await guard(request));
        const role = request.body?.role;
        if (!isMemberRole(role)) throw new ApiError(400, 'Send {"role": "viewer"} or {"role": "editor"}.', 'role');
        const invite = await members.createInvite(request.params.name, role, actor);
        reply.code(201);
        return {
          app_name: invite.app.appName,
          role: invite.role,
          link: inviteLink(site.options.botUsername?.(), invite.code),
          // what to send the bot when the link cannot be made yet
          start: `/start join_${invite.code}`,
          expires_at: invite.expiresAt.toISOString(),
        };
      },
    );

    const memberRef = validated({
      params: {
        ...appNameParams,
        required: ['name', 'ref'],
        properties: { ...appNameParams.properties, ref: text(32) },
      },
    });
    api.delete<{ Params: { name: string; ref: string } }>(
      '/api/apps/:name/members/:ref',
      memberRef,
      async (request, reply) => {
        const actor = actorOf(await guard(request));
        // "me": the signed-in member leaves (a viewer does not see the list the references come from)
        if (request.params.ref === 'me') await members.leave(request.params.name, actor);
        else await members.remove(request.params.name, request.params.ref, actor);
        return reply.code(204).send();
      },
    );

    api.post<{ Params: { name: string }; Body: { ref?: unknown } }>(
      '/api/apps/:name/transfer',
      nameOnly,
      async (request) => {
        const actor = actorOf(await guard(request));
        const ref = request.body?.ref;
        if (typeof ref !== 'string') throw new ApiError(400, 'Send {"ref": "<member reference>"}, as listed.', 'ref');
        return summary((await members.transfer(request.params.name, ref, actor)).app);
      },
    );

    // administrators end every session of a user (a lost phone, a stolen cookie, a departed operator)
    api.post<{ Body: { telegram_id?: unknown } }>('/api/sessions/end', async (request) => {
      const user = await guard(request);
      if (!user.isAdmin) throw new ApiError(403, "Only administrators can end other users' sessions.");
      const id = String(request.body?.telegram_id ?? '').trim();
      if (!/^\d{1,20}$/.test(id)) throw new ApiError(400, 'A Telegram user id is a number.', 'telegram_id');
      return { ended: await site.sessions.endAllOf(id) };
    });
  });
}

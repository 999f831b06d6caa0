// The operator CLI commands over the domain modules; the same code runs in the CLI process or,
// when a service owns the embedded store, inside that service (see operator-routes.ts).
import { parseArgs } from 'node:util';
import { appSummary, appSummaryDocument } from '../events/read/app-summary.ts';
import { erasureDocument, retentionDocument } from '../events/lifecycle/data-controls.ts';
import { effectiveLimits, parseQuota, usageToday } from '../events/request/quota.ts';
import { parseRetention, retentionText } from '../events/lifecycle/retention.ts';
import { computeRanking } from '../ranking/compute.ts';
import type { Services } from '../services.ts';
import { LoginLinks } from '../tokens/login-links.ts';
import { SiteSessions } from '../tokens/site-sessions.ts';
import {
  parseAppLimit,
  parseAppName,
  parseBotAddress,
  parseBotId,
  parseDomain,
  parseTelegramUserId,
} from '../tokens/inputs.ts';
import { lastDays } from '../events/read/dashboard.ts';
import { logDirIn } from '../events/write/log-dir.ts';
import { acknowledgeLosses, unacknowledgedLosses } from '../log/losses.ts';
import {
  type LaunchChecks,
  launchChecksDocument,
  OUTCOME_TEXT,
  readLaunchChecks,
  unverifiedOutcomes,
} from '../events/read/launch-checks.ts';
import { OPERATOR, RegistryError, type AppRecord } from '../tokens/registry.ts';
import { keysCommand, membersCommand } from './access-commands.ts';
import type { CommandResult } from './command-result.ts';
import { accepted, OPTIONS, ownerId, required, UsageError, withAttachedValues } from './arguments.ts';
import { helpAnswer, USAGE } from './usage.ts';

function tokenDocument(token: string, app: AppRecord) {
  return { token, app_name: app.appName, domain: app.domains[0] ?? null, bot: app.bot, bot_id: app.botId };
}

/** what `apps show` and `apps bot-id` say of an app's bot id */
function botIdLine(app: AppRecord): string {
  return app.botId === null
    ? `bot id: none: no launch can be verified; set it with apps bot-id --app-name ${app.appName} --bot-id <id>`
    : `bot id: ${app.botId}`;
}

/** the launches of the last 7 days in a line: verified, and why the others were not */
function launchesLine(checks: LaunchChecks): string {
  const others = unverifiedOutcomes(checks).map(({ outcome, launches }) => `${launches} ${OUTCOME_TEXT[outcome]}`);
  return (
    `launches (7 days): ${checks.launches}, verified ${checks.outcomes.verified} (${checks.verifiedUsers} user${checks.verifiedUsers === 1 ? '' : 's'})` +
    (others.length > 0 ? `; not verified: ${others.join('; ')}` : '')
  );
}

async function run(services: Services, argv: string[]): Promise<{ json: unknown; text: string }> {
  const { values, positionals } = parseArgs({
    args: withAttachedValues(argv),
    options: OPTIONS,
    allowPositionals: true,
    strict: true,
  });
  const command = positionals.join(' ');
  switch (command) {
    case 'tokens create': {
      const { token, app } = await services.registry.createApp(
        {
          appName: accepted(parseAppName(required(values['app-name'], 'app-name'))),
          bot: accepted(parseBotAddress(required(values.bot, 'bot'))),
          botId: values['bot-id'] === undefined ? null : accepted(parseBotId(values['bot-id'])),
          domains: [accepted(parseDomain(required(values.domain, 'domain'), { allowLocalhost: true }))],
          ownerTelegramId: ownerId(values.owner),
          catalogListed: !values.unlisted,
        },
        OPERATOR,
      );
      return {
        json: tokenDocument(token, app),
        text: `Created ${app.appName} (${app.bot}, ${app.domains.join(', ')}).\nToken (shown once): ${token}`,
      };
    }
    case 'tokens list': {
      const apps = await services.registry.listApps(OPERATOR, { ownerTelegramId: ownerId(values.owner) });
      const activities = await services.events.activities(apps.map((app) => app.appId));
      const rows = apps.map((app) => ({
        app_name: app.appName,
        bot: app.bot,
        domains: app.domains,
        token_prefix: app.tokenPrefix,
        revoked: app.tokenPrefix === null,
        created_at: app.createdAt.toISOString(),
        last_event_at: activities.get(app.appId)!.lastEventAt?.toISOString() ?? null,
      }));
      const text =
        rows.length === 0
          ? 'No apps.'
          : rows
              .map(
                (row) =>
                  `${row.app_name}\t${row.token_prefix ?? 'revoked'}\t${row.domains.join(',')}\t${row.last_event_at ?? 'no events yet'}`,
              )
              .join('\n');
      return { json: rows, text };
    }
    case 'tokens revoke': {
      const app = await services.registry.revoke(required(values['app-name'], 'app-name'), OPERATOR);
      return { json: { app_name: app.appName, revoked: true }, text: `Revoked the token of ${app.appName}.` };
    }
    case 'tokens regenerate': {
      const { token, app } = await services.registry.regenerate(required(values['app-name'], 'app-name'), OPERATOR);
      return { json: tokenDocument(token, app), text: `New token of ${app.appName} (shown once): ${token}` };
    }
    case 'apps show': {
      const app = await services.registry.getApp(required(values['app-name'], 'app-name'), OPERATOR);
      const [summary, launches] = await Promise.all([
        appSummary(services, app.appId),
        readLaunchChecks(services.store.reads, app.appId, lastDays(7)),
      ]);
      const document = {
        app_name: app.appName,
        domains: app.domains,
        bot: app.bot,
        bot_id: app.botId,
        ...appSummaryDocument(summary),
        launches_7d: launchChecksDocument(launches),
      };
      const rejection = summary.lastRejection;
      const lines = [
        `${app.appName} (${app.bot}) on ${app.domains.join(', ')}`,
        botIdLine(app),
        `events: ${summary.eventsTotal}, last event: ${document.last_event_at ?? 'no events yet'}`,
        launchesLine(launches),
        `last rejection: ${rejection ? `${rejection.status} ${rejection.message}${rejection.reason ? ` (${rejection.reason})` : ''} from ${rejection.origin ?? 'unknown origin'} at ${document.last_rejection!.at}` : 'none'}`,
      ];
      return { json: document, text: lines.join('\n') };
    }
    case 'apps bot-id': {
      const appName = required(values['app-name'], 'app-name');
      if (values.clear && values['bot-id'] !== undefined)
        throw new UsageError('--clear forgets the bot id: give it without --bot-id');
      const app =
        values['bot-id'] !== undefined || values.clear
          ? await services.registry.setBotId(
              appName,
              values.clear ? null : accepted(parseBotId(values['bot-id']!)),
              OPERATOR,
            )
          : await services.registry.getApp(appName, OPERATOR);
      return {
        json: { app_name: app.appName, bot: app.bot, bot_id: app.botId },
        text: `${app.appName}: ${botIdLine(app)}`,
      };
    }
    case 'apps catalog': {
      const appName = required(values['app-name'], 'app-name');
      if (values.listed && values.unlisted) throw new UsageError('--listed or --unlisted: one of them');
      const app =
        values.listed || values.unlisted
          ? await services.registry.setCatalogListed(appName, Boolean(values.listed), OPERATOR)
          : await services.registry.getApp(appName, OPERATOR);
      return {
        json: { app_name: app.appName, catalog_listed: app.catalogListed },
        text: `${app.appName}: ${app.catalogListed ? 'listed in the public catalog' : 'not in the public catalog'}`,
      };
    }
    case 'owners limit': {
      const telegramId = ownerId(required(values['telegram-id'], 'telegram-id'))!;
      if (values.default && values.apps !== undefined)
        throw new UsageError('--default sets the limit back to MAX_APPS_PER_OWNER: give it without --apps');
      const limits = services.registry.limits;
      const limit =
        values.apps !== undefined || values.default
          ? await limits.set(telegramId, values.default ? null : accepted(parseAppLimit(values.apps!)), OPERATOR)
          : await limits.of(telegramId);
      return {
        json: { owned: limit.owned, max_apps: limit.limit, source: limit.raised ? 'administrator' : 'default' },
        text: `owns ${limit.owned} of at most ${limit.limit} apps (${limit.raised ? 'set by an administrator' : 'MAX_APPS_PER_OWNER'})`,
      };
    }
    case 'apps quota': {
      const appName = required(values['app-name'], 'app-name');
      const eventsPerDay = values['events-per-day'];
      const bytesPerDay = values['bytes-per-day'];
      if (values.default && (eventsPerDay !== undefined || bytesPerDay !== undefined)) {
        throw new UsageError('--default sets both quotas back to the defaults: give it alone');
      }
      const overrides = await services.registry.setQuotas(
        appName,
        values.default
          ? { eventsPerDay: null, bytesPerDay: null }
          : {
              ...(eventsPerDay === undefined
                ? {}
                : { eventsPerDay: accepted(parseQuota(eventsPerDay, '--events-per-day')) }),
              ...(bytesPerDay === undefined
                ? {}
                : { bytesPerDay: accepted(parseQuota(bytesPerDay, '--bytes-per-day')) }),
            },
        OPERATOR,
      );
      await services.quota.sync(); // in force at once here; other nodes read it within seconds
      const app = await services.registry.getApp(appName, OPERATOR);
      const limits = effectiveLimits(
        { eventsPerDay: services.config.quotaEventsPerDay, bytesPerDay: services.config.quotaBytesPerDay },
        overrides,
      );
      const today = await usageToday(services.store.sql, app.appId);
      const source = (override: number | null) => (override === null ? 'default' : 'app');
      const document = {
        app_name: app.appName,
        events_per_day: limits.eventsPerDay,
        bytes_per_day: limits.bytesPerDay,
        source: { events_per_day: source(overrides.eventsPerDay), bytes_per_day: source(overrides.bytesPerDay) },
        today,
      };
      const text = [
        `${app.appName}: ${limits.eventsPerDay} events a day (${document.source.events_per_day}), ${limits.bytesPerDay} bytes a day (${document.source.bytes_per_day})`,
        `today (${today.day} UTC): ${today.events} events, ${today.bytes} bytes`,
      ].join('\n');
      return { json: document, text };
    }
    case 'read-keys create':
    case 'read-keys list':
    case 'read-keys revoke':
    case 'server-keys create':
    case 'server-keys list':
    case 'server-keys revoke':
      return keysCommand(
        command.startsWith('server-') ? services.serverKeys : services.readKeys,
        command.slice(command.indexOf(' ') + 1),
        values,
      );
    case 'members list':
    case 'members invite':
    case 'members remove':
    case 'members transfer':
      return membersCommand(services.members, command.slice('members '.length), values);
    case 'apps retention': {
      const appName = required(values['app-name'], 'app-name');
      const retention =
        values.days === undefined
          ? await services.dataControls.retention(appName, OPERATOR)
          : await services.dataControls.setRetention(appName, accepted(parseRetention(values.days)), OPERATOR);
      const kept =
        retention.days === null
          ? 'forever'
          : `for ${retentionText(retention.days)} (older events, sessions and per-user rows are deleted every hour; daily totals stay)`;
      return { json: retentionDocument(retention), text: `${retention.app.appName} keeps its events ${kept}.` };
    }
    case 'users erase': {
      const appName = required(values['app-name'], 'app-name');
      const telegramUserId = accepted(parseTelegramUserId(required(values['telegram-user-id'], 'telegram-user-id')));
      const erased = await services.dataControls.eraseUser(appName, telegramUserId, OPERATOR);
      const rows = Object.entries(erased.deleted).map(([table, n]) => `${table} ${n}`);
      const text = [
        `Erased the user from ${erased.app.appName}: ${rows.join(', ')}.`,
        ...(erased.complete
          ? []
          : ['Their events kept arriving while erasing: run it again to remove what was stored meanwhile.']),
        'Daily totals of events, users and sessions keep counting them, as anonymous numbers; what only they sent (a start_param, a custom event name or value) is deleted too.',
        `Reference in the audit log: ${erased.reference}`,
        ...erased.leftToOperator,
      ].join('\n');
      return { json: erasureDocument(erased), text };
    }
    case 'ranking run': {
      const apps = await computeRanking(services.store.sql, new Date(), services.store.reads);
      const text =
        apps.length === 0
          ? 'No apps.'
          : apps
              .map(
                (app) =>
                  `${app.rank === null ? '   -' : String(app.rank).padStart(4)}  ${app.appName}  ${app.score === null ? `unranked: ${app.components.unranked_reason ?? ''}` : app.score.toFixed(3)}`,
              )
              .join('\n');
      return { json: apps, text };
    }
    case 'log losses':
    case 'log acknowledge': {
      const logDir = logDirIn(services.config.dataDir);
      const losses = command === 'log losses' ? unacknowledgedLosses(logDir) : acknowledgeLosses(logDir);
      const lines = losses.map(
        (loss) =>
          `${loss.at}: ${loss.events} events in ${loss.records} requests (log records ${loss.firstSeq}–${loss.lastSeq}): ` +
          `${loss.cause}${loss.movedTo ? `; the damaged file is in ${loss.movedTo}` : ''}`,
      );
      const text =
        losses.length === 0
          ? 'No loss of the durable log waits to be acknowledged.'
          : command === 'log losses'
            ? [...lines, 'Acknowledge them with: log acknowledge'].join('\n')
            : [`Acknowledged ${losses.length === 1 ? 'this loss' : `these ${losses.length} losses`}:`, ...lines].join(
                '\n',
              );
      return { json: { losses }, text };
    }
    case 'login-link': {
      const telegramId = ownerId(required(values['telegram-id'], 'telegram-id'))!;
      const base = services.config.publicUrl ?? `http://localhost:${services.config.port}`;
      const url = new LoginLinks(services.store.prisma, services.secrets).create(telegramId, base);
      return { json: { url }, text: url };
    }
    case 'sessions end': {
      const telegramId = ownerId(required(values['telegram-id'], 'telegram-id'))!;
      const ended = await new SiteSessions(services.store.prisma, (id) => services.registry.ownerKey(id)).endAllOf(
        telegramId,
      );
      return { json: { ended }, text: `Ended ${ended} session${ended === 1 ? '' : 's'}.` };
    }
    default:
      throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  }
}

export async function runCommand(services: Services, argv: string[]): Promise<CommandResult> {
  const json = argv.includes('--json');
  const help = helpAnswer(argv);
  if (help) return help;
  try {
    await services.caughtUp();
    const result = await run(services, argv);
    return { exitCode: 0, stdout: (json ? JSON.stringify(result.json) : result.text) + '\n', stderr: '' };
  } catch (error) {
    const known =
      error instanceof UsageError ||
      error instanceof RegistryError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS');
    if (!known) throw error;
    const message = (error as Error).message;
    const exitCode = error instanceof RegistryError ? 1 : 2;
    return json
      ? { exitCode, stdout: JSON.stringify({ error: message }) + '\n', stderr: '' }
      : { exitCode, stdout: '', stderr: `${message}\n${exitCode === 2 ? `\n${USAGE}\n` : ''}` };
  }
}

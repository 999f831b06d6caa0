// The operator CLI commands over the domain modules; the same code runs in the CLI process or,
// when a service owns the embedded store, inside that service (see control-socket.ts).
import { parseArgs } from 'node:util';
import { appSummary, appSummaryDocument } from '../events/read/app-summary.ts';
import { erasureDocument, retentionDocument } from '../events/lifecycle/data-controls.ts';
import { effectiveLimits, parseQuota, usageToday } from '../events/request/quota.ts';
import { parseRetention, retentionText } from '../events/lifecycle/retention.ts';
import { computeRanking } from '../ranking/compute.ts';
import type { Services } from '../services.ts';
import { LoginLinks } from '../tokens/login-links.ts';
import { SiteSessions } from '../tokens/site-sessions.ts';
import { parseAppName, parseBotAddress, parseDomain, parseTelegramUserId } from '../tokens/inputs.ts';
import { makerText } from '../tokens/makers.ts';
import { isMemberRole, madeText, memberDocument, type Members } from '../tokens/members.ts';
import { type AppKeys, givenReadKey, readKeyDocument } from '../tokens/read-keys.ts';
import { OPERATOR, RegistryError, type AppRecord } from '../tokens/registry.ts';
import { utcTime } from '../time-format.ts';
import { helpAnswer, USAGE } from './usage.ts';

export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

class UsageError extends Error {}

const OPTIONS = {
  json: { type: 'boolean' },
  bot: { type: 'string' },
  domain: { type: 'string' },
  'app-name': { type: 'string' },
  owner: { type: 'string' },
  'telegram-id': { type: 'string' },
  'telegram-user-id': { type: 'string' },
  days: { type: 'string' },
  'key-prefix': { type: 'string' },
  role: { type: 'string' },
  member: { type: 'string' },
  'events-per-day': { type: 'string' },
  'bytes-per-day': { type: 'string' },
  default: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

const FLAGS = new Set(Object.keys(OPTIONS).map((name) => `--${name}`));

/**
 * `--option value` as `--option=value` for the options that take a value: a value may start with a dash (a member's
 * reference is base64url), which parseArgs refuses as ambiguous when it stands apart. A flag in the value's place
 * stays a flag, so a missing value is still reported.
 */
function withAttachedValues(argv: string[]): string[] {
  const attached: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i]!.slice(2);
    const next = argv[i + 1];
    const takesValue = argv[i]!.startsWith('--') && OPTIONS[name as keyof typeof OPTIONS]?.type === 'string';
    if (takesValue && next !== undefined && !FLAGS.has(next)) {
      attached.push(`${argv[i]}=${next}`);
      i++;
    } else attached.push(argv[i]!);
  }
  return attached;
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`missing --${flag}`);
  return value;
}

function accepted<T>(parsed: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!parsed.ok) throw new UsageError(parsed.error);
  return parsed.value;
}

function ownerId(value: string | undefined): string | undefined {
  if (value !== undefined && !/^\d{1,20}$/.test(value)) throw new UsageError('a Telegram user id must be numeric');
  return value;
}

function tokenDocument(token: string, app: AppRecord) {
  return { token, app_name: app.appName, domain: app.domains[0] ?? null, bot: app.bot };
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
          domains: [accepted(parseDomain(required(values.domain, 'domain'), { allowLocalhost: true }))],
          ownerTelegramId: ownerId(values.owner),
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
      const summary = await appSummary(services, app.appId);
      const document = {
        app_name: app.appName,
        domains: app.domains,
        bot: app.bot,
        ...appSummaryDocument(summary),
      };
      const rejection = summary.lastRejection;
      const lines = [
        `${app.appName} (${app.bot}) on ${app.domains.join(', ')}`,
        `events: ${summary.eventsTotal}, last event: ${document.last_event_at ?? 'no events yet'}`,
        `last rejection: ${rejection ? `${rejection.status} ${rejection.message}${rejection.reason ? ` (${rejection.reason})` : ''} from ${rejection.origin ?? 'unknown origin'} at ${document.last_rejection!.at}` : 'none'}`,
      ];
      return { json: document, text: lines.join('\n') };
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
        `Erased user ${erased.reference} from ${erased.app.appName}: ${rows.join(', ')}.`,
        ...(erased.complete
          ? []
          : ['Their events kept arriving while erasing: run it again to remove what was stored meanwhile.']),
        'Daily totals keep counting them, as anonymous numbers.',
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

/** an app's team: the operator lists it, invites, removes and hands the app over, as its owner does in the bot */
async function membersCommand(
  members: Members,
  action: string,
  values: { 'app-name'?: string; role?: string; member?: string },
): Promise<{ json: unknown; text: string }> {
  const appName = required(values['app-name'], 'app-name');
  switch (action) {
    case 'list': {
      const { app, members: listed } = await members.list(appName, OPERATOR);
      const text =
        listed.length === 0
          ? 'No owner or members.'
          : listed
              .map((member) =>
                [
                  member.ref,
                  member.role,
                  member.name ?? '-',
                  ...(member.addedAt ? [`joined ${utcTime(member.addedAt)}`] : []),
                  ...(member.made.keys > 0 || member.made.shareLink ? [`made ${madeText(member.made)}`] : []),
                ].join('\t'),
              )
              .join('\n');
      return { json: { app_name: app.appName, members: listed.map(memberDocument) }, text };
    }
    case 'invite': {
      const role = values.role;
      if (!isMemberRole(role)) throw new UsageError('--role takes viewer or editor');
      const invite = await members.createInvite(appName, role, OPERATOR);
      const start = `/start join_${invite.code}`;
      return {
        json: { app_name: invite.app.appName, role, start, expires_at: invite.expiresAt.toISOString() },
        text: `Invite to ${invite.app.appName} as ${role}, single use, until ${utcTime(invite.expiresAt)}: the teammate sends the management bot\n${start}`,
      };
    }
    case 'remove': {
      const { app, member, revoked } = await members.remove(appName, required(values.member, 'member'), OPERATOR);
      const alsoRevoked = madeText(revoked);
      return {
        json: {
          app_name: app.appName,
          member: memberDocument(member),
          revoked: { keys: revoked.keys, share_link: revoked.shareLink },
        },
        text: `Removed ${member.name ? `${member.name} (${member.ref}, ${member.role})` : `${member.ref} (${member.role})`} from ${app.appName}${alsoRevoked ? ` and revoked ${alsoRevoked} they made` : ''}.`,
      };
    }
    default: {
      const { app, member, ownerBefore } = await members.transfer(appName, required(values.member, 'member'), OPERATOR);
      return {
        json: { app_name: app.appName, member: { ...memberDocument(member), role: 'owner' } },
        text: `${member.ref} now owns ${app.appName}${ownerBefore ? `; ${ownerBefore}, its owner before, is an editor` : ''}.`,
      };
    }
  }
}

/** read-keys and server-keys: the same three commands and JSON shapes over either kind of per-app key */
async function keysCommand(
  keys: AppKeys,
  action: string,
  values: { 'app-name'?: string; 'key-prefix'?: string },
): Promise<{ json: unknown; text: string }> {
  const { noun, prefix } = keys.kind;
  switch (action) {
    case 'create': {
      const { key, readKey } = await keys.create(required(values['app-name'], 'app-name'), OPERATOR);
      return {
        json: { key, app_name: readKey.appName },
        text: `New ${noun} of ${readKey.appName} (shown once): ${key}`,
      };
    }
    case 'list': {
      const listed = await keys.list(required(values['app-name'], 'app-name'), OPERATOR);
      const text =
        listed.length === 0
          ? `No ${noun}s.`
          : listed
              .map(
                (key) =>
                  `${key.prefix}…\tcreated ${key.createdAt.toISOString()} by ${makerText(key.madeBy)}\t${key.revokedAt ? `revoked ${key.revokedAt.toISOString()}` : 'active'}`,
              )
              .join('\n');
      return { json: listed.map(readKeyDocument), text };
    }
    default: {
      const given = required(values['key-prefix'], 'key-prefix');
      if (givenReadKey(given, prefix) === null)
        throw new UsageError(`--key-prefix takes a ${noun} prefix as listed: ${prefix} and at least 4 more characters`);
      const revoked = await keys.revoke(given, OPERATOR);
      return {
        json: readKeyDocument(revoked),
        text: `Revoked the ${noun} ${revoked.prefix}… of ${revoked.appName}.`,
      };
    }
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

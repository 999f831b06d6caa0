// The operator CLI's commands over who may reach an app: its team (members) and its per-app keys (read and server
// keys), as its owner manages them in the bot.
import { makerText } from '../tokens/makers.ts';
import { isMemberRole, madeText, memberDocument, type Members } from '../tokens/members.ts';
import { type AppKeys, givenReadKey, readKeyDocument } from '../tokens/read-keys.ts';
import { OPERATOR } from '../tokens/registry.ts';
import { utcTime } from '../platform/time-format.ts';
import { required, UsageError } from './arguments.ts';

/** an app's team: the operator lists it, invites, removes and hands the app over, as its owner does in the bot */
export async function membersCommand(
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
export async function keysCommand(
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

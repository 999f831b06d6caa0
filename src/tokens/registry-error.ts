// The control plane's refusals: a code each surface answers by (the bot's and the site's texts, the HTTP status, the
// CLI's exit code), with a sentence people read.

export type RegistryErrorCode =
  | 'app_exists'
  | 'app_not_found'
  | 'domain_exists'
  | 'last_domain'
  | 'domain_not_found'
  | 'not_allowed'
  // a member whose role does not allow the action (policy.ts); non-members get app_not_found
  | 'forbidden'
  // teams (members.ts): an unknown, used or expired invite, an unknown member, the owner joining their own app
  | 'invite_not_found'
  | 'invite_used'
  | 'invite_expired'
  | 'member_not_found'
  | 'own_app'
  // the team changed while a transfer or removal waited (another one went first)
  | 'team_changed'
  // read keys (read-keys.ts): none matches, several match, already revoked, too many active
  | 'key_not_found'
  | 'key_ambiguous'
  | 'key_revoked'
  | 'key_limit'
  // a person owns as many apps as they may (MAX_APPS_PER_OWNER, or what an administrator set)
  | 'app_limit';

export class RegistryError extends Error {
  constructor(
    readonly code: RegistryErrorCode,
    message: string,
  ) {
    super(message);
  }
}

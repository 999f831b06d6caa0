// Who may do what on an app: the roles of its team, the actions they allow, and the sentence a refusal says.
/** a team member's role; the app's owner holds 'owner' */
export type MemberRole = 'editor' | 'viewer';

/** what an actor is to an app: administrators (and the operator CLI) may do everything, on every app */
export type AppRole = 'owner' | MemberRole | 'administrator';

export const MEMBER_ROLES: readonly MemberRole[] = ['viewer', 'editor'];

export type Permission =
  /** dashboards, insights, exports, retention as it is, one's own alert settings */
  | 'view'
  /** saving and deleting the app's funnels */
  | 'save-funnels'
  | 'manage-domains'
  /** the app token (revoke, regenerate), read keys, server keys */
  | 'manage-tokens'
  /** the public read-only link of the dashboard */
  | 'share'
  /** the list of the app's members */
  | 'view-members'
  /** retention and erasing a user: what is kept of people's data is the owner's decision alone */
  | 'manage-data'
  /** inviting and removing members (a member may always leave) */
  | 'manage-members'
  | 'delete'
  | 'transfer';

/** the least role each action takes: viewer < editor < owner */
const LEAST_ROLE: Record<Permission, 'viewer' | 'editor' | 'owner'> = {
  view: 'viewer',
  'save-funnels': 'editor',
  'manage-domains': 'editor',
  'manage-tokens': 'editor',
  share: 'editor',
  'view-members': 'editor',
  'manage-data': 'owner',
  'manage-members': 'owner',
  delete: 'owner',
  transfer: 'owner',
};

const RANK = { viewer: 0, editor: 1, owner: 2 } as const;

export function allows(role: AppRole, permission: Permission): boolean {
  return role === 'administrator' || RANK[role] >= RANK[LEAST_ROLE[permission]];
}

/** what a refused member is told: the action, and who may do it */
const REFUSAL: Record<Permission, string> = {
  view: 'You cannot see this app.',
  'save-funnels': 'Viewers cannot save or delete funnels.',
  'manage-domains': 'Viewers cannot change domains.',
  'manage-tokens': 'Viewers cannot manage the token or keys.',
  share: 'Viewers cannot share the dashboard.',
  'view-members': 'Viewers cannot see the team.',
  'manage-data': 'Only the owner can change data controls.',
  'manage-members': 'Only the owner can invite or remove members.',
  delete: 'Only the owner can delete this app.',
  transfer: 'Only the owner can transfer this app.',
};

export function refusal(permission: Permission): string {
  return REFUSAL[permission];
}

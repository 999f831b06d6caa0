// The role table itself: what owners, editors, viewers and administrators may do, and what a refused member is told.
import { describe, expect, it } from 'vitest';
import { allows, refusal, type AppRole, type Permission } from '../../src/tokens/policy.ts';

const TABLE: Record<Permission, AppRole[]> = {
  view: ['owner', 'editor', 'viewer', 'administrator'],
  'save-funnels': ['owner', 'editor', 'administrator'],
  'manage-domains': ['owner', 'editor', 'administrator'],
  'manage-tokens': ['owner', 'editor', 'administrator'],
  share: ['owner', 'editor', 'administrator'],
  'view-members': ['owner', 'editor', 'administrator'],
  'manage-data': ['owner', 'administrator'],
  'manage-members': ['owner', 'administrator'],
  delete: ['owner', 'administrator'],
  transfer: ['owner', 'administrator'],
};
const ROLES: AppRole[] = ['owner', 'editor', 'viewer', 'administrator'];

describe('policy', () => {
  it('allows each permission to exactly the roles of the table', () => {
    for (const [permission, allowed] of Object.entries(TABLE) as [Permission, AppRole[]][])
      expect(
        ROLES.filter((role) => allows(role, permission)),
        permission,
      ).toEqual(allowed);
  });

  it('tells a refused member who may', () => {
    expect(refusal('delete')).toBe('Only the owner can delete this app.');
    expect(refusal('manage-domains')).toBe('Viewers cannot change domains.');
  });
});

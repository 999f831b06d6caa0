// What each app button takes (src/tokens/policy.ts): the loader of app actions asks the registry for it before any
// handler runs, and the keyboards show a button only to roles that have it.
import { allows, type Permission } from '../tokens/policy.ts';
import type { AppRecord } from '../tokens/registry.ts';
import type { AppAction } from './keyboards.ts';

export const ACTION_PERMISSION: Record<AppAction, Permission> = {
  app: 'view',
  rev: 'manage-tokens',
  'rev!': 'manage-tokens',
  regen: 'manage-tokens',
  'regen!': 'manage-tokens',
  dom: 'manage-domains',
  domadd: 'manage-domains',
  domdel: 'manage-domains',
  botid: 'manage-domains',
  cat: 'share',
  del: 'delete',
  'del!': 'delete',
  rk: 'manage-tokens',
  rknew: 'manage-tokens',
  rkrev: 'manage-tokens',
  'rkrev!': 'manage-tokens',
  sk: 'manage-tokens',
  sknew: 'manage-tokens',
  skrev: 'manage-tokens',
  'skrev!': 'manage-tokens',
  data: 'manage-data',
  ret: 'manage-data',
  'ret!': 'manage-data',
  erase: 'manage-data',
  'erase!': 'manage-data',
  share: 'share',
  'share!': 'share',
  'unshare!': 'share',
  team: 'view-members',
  inv: 'manage-members',
  mdel: 'manage-members',
  'mdel!': 'manage-members',
  xfer: 'transfer',
  'xfer!': 'transfer',
  leave: 'view',
  'leave!': 'view',
};

/** the action's button belongs on the app's keyboards for the actor's role */
export function mayPress(app: AppRecord, action: AppAction): boolean {
  return allows(app.role, ACTION_PERMISSION[action]);
}

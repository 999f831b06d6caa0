// Every button of an app: its callback code and the permission it takes (src/tokens/policy.ts), named once. Callback
// data names an app by id only; the loader of app actions (app-actions.ts) asks the registry for the permission before
// any handler runs, and the keyboards show a button only to roles that have it.
import type { CallbackQueryContext } from 'grammy';
import { allows, type Permission } from '../tokens/policy.ts';
import type { AppRecord } from '../tokens/registry.ts';
import type { BotContext } from './context.ts';

export const APP_ACTIONS = {
  app: 'view',
  rev: 'manage-tokens',
  'rev!': 'manage-tokens',
  regen: 'manage-tokens',
  'regen!': 'manage-tokens',
  dom: 'manage-domains',
  domadd: 'manage-domains',
  domdel: 'manage-domains',
  // the id of the app's bot, asked in a dialog
  botid: 'manage-domains',
  // the public catalog: list the app, or take it out
  cat: 'share',
  del: 'delete',
  'del!': 'delete',
  // read keys: the list, a new one, revoke (asks first) and revoke confirmed
  rk: 'manage-tokens',
  rknew: 'manage-tokens',
  rkrev: 'manage-tokens',
  'rkrev!': 'manage-tokens',
  // server keys: the same four
  sk: 'manage-tokens',
  sknew: 'manage-tokens',
  skrev: 'manage-tokens',
  'skrev!': 'manage-tokens',
  // data controls: the screen, a retention chosen (asks first when it keeps less) and confirmed, erasing a user
  // (the dialog asking for the id) and the erase confirmed, with the user's key
  data: 'manage-data',
  ret: 'manage-data',
  'ret!': 'manage-data',
  erase: 'manage-data',
  'erase!': 'manage-data',
  // the public link: its screen, a new link, revoking it
  share: 'share',
  'share!': 'share',
  'unshare!': 'share',
  // the team: its screen, an invite (extra: the role), removing a member and handing the app over (each asks first;
  // extra: the member's reference), a member leaving (asks first)
  team: 'view-members',
  inv: 'manage-members',
  mdel: 'manage-members',
  'mdel!': 'manage-members',
  xfer: 'transfer',
  'xfer!': 'transfer',
  leave: 'view',
  'leave!': 'view',
} as const satisfies Record<string, Permission>;
export type AppAction = keyof typeof APP_ACTIONS;

export function appData(action: AppAction, appId: number, extra?: number | string): string {
  return extra === undefined ? `${action}:${appId}` : `${action}:${appId}:${extra}`;
}

/**
 * an optional last part: a domain's position, the shown characters of a read key (never the key itself), a
 * retention, or the key of a user to erase (22 characters; never the Telegram id)
 */
const EXTRA = '(?::([0-9A-Za-z_-]{1,22}))?';

/** the callback data of one app action: group 1 is the app id, group 2 the optional extra part */
export function appActionData(action: AppAction): RegExp {
  return new RegExp(`^${action}:(\\d{1,9})${EXTRA}$`);
}

/** the callback data of any app action, with the same groups */
export const APP_DATA = new RegExp(`^(?:${Object.keys(APP_ACTIONS).join('|')}):(\\d{1,9})${EXTRA}$`);

/** the action's button belongs on the app's keyboards for the actor's role */
export function mayPress(app: AppRecord, action: AppAction): boolean {
  return allows(app.role, APP_ACTIONS[action]);
}

/** a press on an app's button, with the app it names, already checked */
export type AppContext = CallbackQueryContext<BotContext & { app: AppRecord }>;

/** installs the handler of one app action */
export type OnAppAction = (action: AppAction, handler: (ctx: AppContext) => unknown) => void;

// Inline keyboards: the buttons each screen shows, to the roles that may press them (their callback data and
// permissions are in actions.ts; every handler re-checks that the user may touch the app, so forged data gets nothing).
import { InlineKeyboard } from 'grammy';
import { RETENTION_CHOICES, retentionText, type RetentionDays } from '../events/lifecycle/retention.ts';
import { READ_KEY_PREFIX, type ReadKeyInfo } from '../tokens/read-keys.ts';
import type { AppRecord } from '../tokens/registry.ts';
import { appData, mayPress } from './actions.ts';

export function mainKeyboard(): InlineKeyboard {
  return new InlineKeyboard().text('📊 Analytics', 'menu:analytics');
}

/** dashboardUrl: the site's /webapp page (https only), opened inside Telegram as a Mini App */
export function analyticsKeyboard(isAdmin: boolean, dashboardUrl?: string): InlineKeyboard {
  const keyboard = new InlineKeyboard().text('➕ New token', 'menu:new').text('📋 My tokens', 'menu:apps');
  if (dashboardUrl) keyboard.row().webApp('📈 Open dashboards', dashboardUrl);
  return isAdmin ? keyboard.row().text('🛠 All apps (admin)', 'admin:apps') : keyboard;
}

export function appsKeyboard(apps: AppRecord[]): InlineKeyboard {
  const keyboard = new InlineKeyboard();
  apps.forEach((app, index) => {
    keyboard.text(`⚙️ ${app.appName}`, appData('app', app.appId));
    if (index % 2 === 1) keyboard.row();
  });
  return keyboard.row().text('➕ New token', 'menu:new').text('« Back', 'menu:analytics');
}

/** the app's buttons its role allows (src/bot/actions.ts), the dashboard and its alerts for everyone */
export function appKeyboard(app: AppRecord, dashboardUrl?: string): InlineKeyboard {
  const keyboard = new InlineKeyboard();
  const buttons = (
    [
      ['regen', '🔄 Regenerate'],
      ['dom', '🌐 Domains'],
      ['botid', '🆔 Bot id'],
      ['rk', '🔑 Read API keys'],
      ['data', '🛡 Data controls'],
      ['sk', '🤖 Server keys'],
      ['share', '🔗 Public link'],
      ['team', '👥 Team'],
      ['cat', app.catalogListed ? '📇 Take out of catalog' : '📇 List in catalog'],
    ] as const
  ).filter(([action]) => mayPress(app, action));
  buttons.forEach(([action, label], index) => {
    keyboard.text(label, appData(action, app.appId));
    if (index % 2 === 1) keyboard.row();
  });
  keyboard.row();
  if (dashboardUrl) keyboard.webApp('📈 Dashboard', dashboardUrl);
  keyboard.text('🔔 Alerts', `alerts:app:${app.appId}`).row();
  if (app.tokenPrefix && mayPress(app, 'rev')) keyboard.text('🚫 Revoke', appData('rev', app.appId));
  if (mayPress(app, 'del')) keyboard.text('🗑 Delete app', appData('del', app.appId));
  if (app.role === 'editor' || app.role === 'viewer') keyboard.text('🚪 Leave', appData('leave', app.appId));
  return keyboard.row().text('« My tokens', 'menu:apps');
}

export function confirmKeyboard(action: 'rev!' | 'regen!' | 'del!', appId: number, label: string): InlineKeyboard {
  return new InlineKeyboard().text(label, appData(action, appId)).text('Cancel', appData('app', appId));
}

export function domainsKeyboard(app: AppRecord): InlineKeyboard {
  const keyboard = new InlineKeyboard();
  if (app.domains.length > 1) {
    app.domains.forEach((domain, index) => keyboard.text(`➖ ${domain}`, appData('domdel', app.appId, index)).row());
  }
  return keyboard.text('➕ Add domain', appData('domadd', app.appId)).text('« Back', appData('app', app.appId));
}

/** the random characters of a key's display prefix: what the revoke buttons carry */
export const shownPart = (key: ReadKeyInfo) => key.prefix.slice(READ_KEY_PREFIX.length);

export function readKeysKeyboard(app: AppRecord, keys: ReadKeyInfo[]): InlineKeyboard {
  const keyboard = new InlineKeyboard();
  for (const key of keys.filter((entry) => entry.revokedAt === null))
    keyboard.text(`🚫 Revoke ${key.prefix}…`, appData('rkrev', app.appId, shownPart(key))).row();
  return keyboard.text('➕ New read key', appData('rknew', app.appId)).text('« Back', appData('app', app.appId));
}

export function revokeReadKeyKeyboard(appId: number, shown: string): InlineKeyboard {
  return new InlineKeyboard()
    .text('🚫 Yes, revoke', appData('rkrev!', appId, shown))
    .text('Cancel', appData('rk', appId));
}

/** under a new read key: back to the list, which now shows its prefix */
export function readKeyIssuedKeyboard(appId: number): InlineKeyboard {
  return new InlineKeyboard().text('« Read API keys', appData('rk', appId));
}

/** a retention as the buttons carry it */
export const retentionData = (days: RetentionDays) => (days === null ? 'forever' : String(days));

/** the retention choices (the current one ticked), erasing a user's data, back to the app */
export function dataControlsKeyboard(appId: number, current: RetentionDays): InlineKeyboard {
  const keyboard = new InlineKeyboard();
  [null, ...RETENTION_CHOICES].forEach((days, index) => {
    const label = `${days === current ? '✓ ' : ''}${retentionText(days)}`;
    keyboard.text(label, appData('ret', appId, retentionData(days)));
    if (index === 2) keyboard.row();
  });
  return keyboard
    .row()
    .text("🧹 Erase a user's data", appData('erase', appId))
    .row()
    .text('« Back', appData('app', appId));
}

export function retentionConfirmKeyboard(appId: number, days: RetentionDays): InlineKeyboard {
  return new InlineKeyboard()
    .text(`🗓 Yes, keep ${retentionText(days)}`, appData('ret!', appId, retentionData(days)))
    .text('Cancel', appData('data', appId));
}

/** userKey: the user's key as text (src/events/lifecycle/data-controls.ts), never their Telegram id */
export function eraseConfirmKeyboard(appId: number, userKey: string): InlineKeyboard {
  return new InlineKeyboard()
    .text('🧹 Yes, erase', appData('erase!', appId, userKey))
    .text('Cancel', appData('data', appId));
}

export function dataControlsBackKeyboard(appId: number): InlineKeyboard {
  return new InlineKeyboard().text('« Data controls', appData('data', appId));
}

// The commands the bot answers, in one list: Telegram's command menu (setMyCommands) and /help are both made from it.
import { escapeHtml } from './texts.ts';

export interface Command {
  command: string;
  /** one line of what it does: the menu's description and the line of /help */
  description: string;
}

export const COMMANDS: readonly Command[] = [
  { command: 'start', description: 'Main menu' },
  { command: 'analytics', description: 'Tokens of your mini apps and their last events' },
  { command: 'newtoken', description: 'Register a mini app and get its token' },
  { command: 'mytokens', description: 'Your apps, tokens and last event times' },
  { command: 'alerts', description: 'What the bot warns you about, per app' },
  { command: 'cancel', description: 'Stop the current step' },
  { command: 'help', description: 'The commands and what they do' },
];

/** shown to administrators only, in their own chats' menus and their /help */
export const ADMIN_COMMANDS: readonly Command[] = [
  { command: 'admin', description: 'All apps (administrators)' },
  { command: 'find', description: 'Find apps by app name or owner id (administrators)' },
  { command: 'revoke', description: 'Revoke the token of any app (administrators)' },
];

/** the commands a user's menu lists */
export const commandsOf = (isAdmin: boolean): Command[] => [...COMMANDS, ...(isAdmin ? ADMIN_COMMANDS : [])];

export function helpText(isAdmin: boolean): string {
  return [
    'ℹ️ <b>Commands</b>',
    ...commandsOf(isAdmin).map(({ command, description }) => `/${command} — ${escapeHtml(description)}`),
  ].join('\n');
}

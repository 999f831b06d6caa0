// The CLI's usage text and its answer to --help: printed without the store or the service's modules.
import type { CommandResult } from './command-result.ts';

export const USAGE = `Usage: npm run -s cli -- <command> [options]

  tokens create --bot <@name | https://t.me/name> --domain <host> --app-name <name> [--bot-id <id>]
                [--owner <telegram id>] [--unlisted] [--json]   --bot-id: the number before ":" in the bot's token
                                               (never the token): Telegram signs the app's launches for it;
                                               --unlisted: not in the public catalog
  tokens list [--owner <telegram id>] [--json]
  tokens revoke --app-name <name> [--json]
  tokens regenerate --app-name <name> [--json]
  apps show --app-name <name> [--json]         the app, its last event and refusal, its launches of the last 7 days
  apps bot-id --app-name <name> [--bot-id <id> | --clear] [--json]
                                               set (or forget) the id of the app's bot; print it
  apps catalog --app-name <name> [--listed | --unlisted] [--json]
                                               list the app in the public catalog or take it out; print which
  apps quota --app-name <name> [--events-per-day <n>] [--bytes-per-day <n>] [--default] [--json]
                                               set the app's daily quotas (--default: the service's); print them
  apps retention --app-name <name> [--days <30|90|180|365|forever>] [--json]
                                               set how long the app's events are kept (default forever); print it
  users erase --app-name <name> --telegram-user-id <id> [--json]
                                               erase every event and per-user row of one user of the app
  read-keys create --app-name <name> [--json]  a key of the read API (/api/v1/apps/<name>/…); shown once
  read-keys list --app-name <name> [--json]    the app's read keys (prefixes only, who made each), active first
  read-keys revoke --key-prefix <prefix> [--json]
                                               revoke the key the prefix (as listed, or its first 4+ characters) names
  server-keys create --app-name <name> [--json]  a key for POST /events from the app's own bot or backend
                                               (Authorization: Bearer tma_server_…, no Origin needed); shown once
  server-keys list --app-name <name> [--json]  the app's server keys (prefixes only, who made each), active first
  server-keys revoke --key-prefix <prefix> [--json]
  members list --app-name <name> [--json]     the app's owner and team, with the references the commands below take
  members invite --app-name <name> --role <viewer|editor> [--json]
                                               a single-use invite: the teammate sends it to the management bot
  members remove --app-name <name> --member <ref> [--json]
                                               remove a member from the app's team: their alerts for it stop, the
                                               read keys, server keys and public link they made are revoked
  members transfer --app-name <name> --member <ref> [--json]
                                               make a member the app's owner (the owner before becomes an editor)
  owners limit --telegram-id <id> [--apps <n> | --default] [--json]
                                               how many apps the person may own (default MAX_APPS_PER_OWNER)
  login-link --telegram-id <id> [--json]      one-time sign-in link to the site (valid 15 minutes)
  sessions end --telegram-id <id> [--json]    sign the user out of the site everywhere (every session ends)
  ranking run [--json]                         recompute the catalog ranking now
  log losses [--json]                          events the durable log was found to have lost, not acknowledged yet
  log acknowledge [--json]                     acknowledge them: /healthz says "ok" again`;

/** the answer to `--help` or to no command at all (usage, exit code 2); undefined for a command */
export function helpAnswer(argv: string[]): CommandResult | undefined {
  if (argv.includes('--help') || argv.length === 0)
    return { exitCode: argv.length === 0 ? 2 : 0, stdout: `${USAGE}\n`, stderr: '' };
  return undefined;
}

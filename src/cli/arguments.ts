// The operator CLI's arguments: the options every command may take, and the checks that turn a missing or malformed
// one into a usage error (exit code 2, with the usage text).

/** a command line the CLI cannot run: its message says why, and the usage text follows it */
export class UsageError extends Error {}

/** every option of every command, as node:util's parseArgs takes them */
export const OPTIONS = {
  json: { type: 'boolean' },
  bot: { type: 'string' },
  'bot-id': { type: 'string' },
  clear: { type: 'boolean' },
  listed: { type: 'boolean' },
  unlisted: { type: 'boolean' },
  apps: { type: 'string' },
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
export function withAttachedValues(argv: string[]): string[] {
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

export function required(value: string | undefined, flag: string): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`missing --${flag}`);
  return value;
}

export function accepted<T>(parsed: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!parsed.ok) throw new UsageError(parsed.error);
  return parsed.value;
}

export function ownerId(value: string | undefined): string | undefined {
  if (value !== undefined && !/^\d{1,20}$/.test(value)) throw new UsageError('a Telegram user id must be numeric');
  return value;
}

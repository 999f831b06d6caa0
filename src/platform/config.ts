// Every setting of the service, read from the environment, parsed and validated in one place.
import fs from 'node:fs';
import path from 'node:path';

/** a read's time budget when READ_BUDGET_MS gives none: PostgreSQL's statement timeout of the service's other work */
export const DEFAULT_READ_BUDGET_MS = 5_000;
/**
 * Reads at once on PostgreSQL when READ_CONNECTIONS gives none: each takes a server core while it runs, and a server
 * on the service's own small machine running reads side by side leaves ingestion no core (bench/lived-in.ts measures
 * ingest latency while reads run); a server with cores to spare takes more.
 */
export const DEFAULT_READ_CONNECTIONS = 1;

export type TrustProxy = boolean | number | string[];

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** unset: embedded PGlite in dataDir */
  databaseUrl?: string;
  /** unset: rate-limit counters in memory */
  redisUrl?: string;
  botToken?: string;
  telegramApiRoot?: string;
  /** set: the bot's updates arrive at this address (a route of this service, at its path); unset: long polling */
  botWebhookUrl?: string;
  /** what Telegram sends back with each webhook call; unset: derived from the secret and the bot token */
  botWebhookSecret?: string;
  adminTelegramIds: string[];
  /** whether bot and site users may register "localhost" as a mini app domain (development setups) */
  allowLocalhostDomains: boolean;
  publicUrl?: string;
  rateLimitMax: number;
  rateLimitWindowMs: number;
  /** read API requests per key (per client without one) and minute, on each node */
  readApiRateLimitMax: number;
  trustProxy: TrustProxy;
  logLevel: string;
  /** from SECRET, else read from SECRET_FILE; unset: generated once into dataDir */
  secret?: string;
  /** where the secret was read from (absolute), when it came from SECRET_FILE */
  secretFile?: string;
  /** NODE_ENV=production: warn about set-ups that are fine for development only */
  production: boolean;
  /** largest accepted request body after gzip decoding, in bytes */
  maxBodyBytes: number;
  maxEventsPerRequest: number;
  /** events an app may send per UTC day unless an administrator set its own quota */
  quotaEventsPerDay: number;
  /** bytes of event JSON an app may send per UTC day unless an administrator set its own quota */
  quotaBytesPerDay: number;
  /** bytes the durable log may hold waiting for the store; beyond it POST /events answers "Failed to record" */
  logMaxBytes: number;
  /** free space the durable log leaves on its disk; below it POST /events answers "Failed to record" */
  logMinFreeBytes: number;
  /** a read's time budget (dashboards, insights, read API, public link, bot, alerts, ranking, CSV export) */
  readBudgetMs: number;
  /** reads at once on PostgreSQL (the embedded store runs one at a time) */
  readConnections: number;
  /**
   * the prebuilt empty database a new embedded DATA_DIR starts from (unset: the one `npm ci` made; "none": make a new
   * one with initdb, as when the prebuilt one is missing)
   */
  embeddedClusterTemplate: string | null | undefined;
  /** Telegram's Ed25519 public key (hex) its launches are checked with; a staging installation or a test sets its own */
  telegramPublicKey: string;
  /** the key of Telegram's test environment, for launches an SDK initialised with env 'STG' reports */
  telegramTestPublicKey: string;
  /** how old a launch's signed auth_date may be when its app-init arrives, in seconds */
  launchMaxAgeSeconds: number;
  /** apps one person may own unless an administrator raised their limit */
  maxAppsPerOwner: number;
  /** the .env file the settings were read from (beneath what the environment sets), when there was one */
  envFile?: string;
}

export class ConfigError extends Error {}

/** about 10 events a day from each of a million daily users (see .env.example) */
export const DEFAULT_QUOTA_EVENTS_PER_DAY = 10_000_000;
/** 10 GiB: 1 KiB per event at the event quota, several times a typical event (a few hundred bytes) */
export const DEFAULT_QUOTA_BYTES_PER_DAY = 10 * 1024 ** 3;

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function flag(env: Env, name: string): boolean {
  const raw = text(env, name);
  if (raw === undefined || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function trustProxy(raw: string | undefined): TrustProxy {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

function adminIds(raw: string | undefined): string[] {
  const ids = (raw ?? '')
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean);
  const bad = ids.find((id) => !/^\d{1,20}$/.test(id));
  if (bad !== undefined) throw new ConfigError(`ADMIN_TELEGRAM_IDS must be numeric Telegram user ids, got "${bad}"`);
  return ids;
}

const MIN_SECRET_LENGTH = 32;

/** Telegram's keys for checking launch data as a third party (Bot API, "Validating data for third-party use") */
export const TELEGRAM_PRODUCTION_KEY = 'e7bf03a2fa4602af4580703d88dda5bb59f32ed8b02a56c187fe7d34caed242d';
export const TELEGRAM_TEST_KEY = '40055058a4ee38156a06562e52eece92a771bcd8346a8c4615cb7376eddf72ec';

/** a raw Ed25519 public key as 64 hex digits */
function publicKey(env: Env, name: string, fallback: string): string {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^[0-9a-fA-F]{64}$/.test(raw))
    throw new ConfigError(`${name} must be an Ed25519 public key as 64 hex digits, got "${raw}"`);
  return raw.toLowerCase();
}

/** an absolute http(s) URL with a path of its own: the service serves the webhook at that path */
function webhookUrl(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`BOT_WEBHOOK_URL must be an absolute URL, got "${raw}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ConfigError(`BOT_WEBHOOK_URL must be an https:// URL (Telegram calls only https), got "${raw}"`);
  if (url.pathname === '/' || url.search || url.hash)
    throw new ConfigError(
      `BOT_WEBHOOK_URL must have a path of its own and no query, e.g. https://example.com/telegram/webhook`,
    );
  return url.href;
}

/** Telegram accepts 1 to 256 characters A-Z, a-z, 0-9, _ and - as a webhook's secret token */
function webhookSecret(raw: string | undefined): string | undefined {
  if (raw !== undefined && !/^[A-Za-z0-9_-]{1,256}$/.test(raw))
    throw new ConfigError('BOT_WEBHOOK_SECRET must be 1 to 256 characters of A-Z, a-z, 0-9, _ and -');
  return raw;
}

/** the secret held by SECRET_FILE (a mounted secret, say), read once at start */
function secretFromFile(file: string): string {
  let secret: string;
  try {
    secret = fs.readFileSync(file, 'utf8').trim();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(
      `SECRET_FILE ${file} cannot be read (${code === 'ENOENT' ? 'no such file' : (code ?? (error as Error).message)})`,
    );
  }
  if (secret.length < MIN_SECRET_LENGTH)
    throw new ConfigError(`SECRET_FILE ${file} must hold a secret of at least ${MIN_SECRET_LENGTH} characters`);
  return secret;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/**
 * Reads the settings of a .env file in the working directory into the environment, beneath what it already sets (the
 * environment wins); returns the file's path, or undefined without one. A service and the CLI read it once at start.
 */
export function loadEnvFile(file = path.resolve('.env')): string | undefined {
  if (!fs.existsSync(file)) return undefined;
  try {
    process.loadEnvFile(file);
  } catch (error) {
    throw new ConfigError(`${file} cannot be read (${(error as Error).message})`);
  }
  return file;
}

export function loadConfig(env: Env = process.env, envFile?: string): Config {
  const logLevel = text(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  // SECRET wins over SECRET_FILE, which wins over the file generated into DATA_DIR
  const givenFile = text(env, 'SECRET') === undefined ? text(env, 'SECRET_FILE') : undefined;
  const secretFile = givenFile === undefined ? undefined : path.resolve(givenFile);
  const secret = secretFile === undefined ? text(env, 'SECRET') : secretFromFile(secretFile);
  if (secret !== undefined && secret.length < MIN_SECRET_LENGTH)
    throw new ConfigError(`SECRET must be at least ${MIN_SECRET_LENGTH} characters`);
  const databaseUrl = text(env, 'DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  return {
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: text(env, 'HOST') ?? '0.0.0.0',
    dataDir: path.resolve(text(env, 'DATA_DIR') ?? './data'),
    databaseUrl,
    redisUrl: text(env, 'REDIS_URL'),
    botToken: text(env, 'BOT_TOKEN'),
    telegramApiRoot: text(env, 'TELEGRAM_API_ROOT'),
    botWebhookUrl: webhookUrl(text(env, 'BOT_WEBHOOK_URL')),
    botWebhookSecret: webhookSecret(text(env, 'BOT_WEBHOOK_SECRET')),
    adminTelegramIds: adminIds(text(env, 'ADMIN_TELEGRAM_IDS')),
    allowLocalhostDomains: flag(env, 'ALLOW_LOCALHOST_DOMAINS'),
    publicUrl: text(env, 'PUBLIC_URL')?.replace(/\/+$/, ''),
    rateLimitMax: integer(env, 'RATE_LIMIT_MAX', 600, 1, 1_000_000_000),
    rateLimitWindowMs: integer(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 100, 86_400_000),
    readApiRateLimitMax: integer(env, 'READ_API_RATE_LIMIT_MAX', 120, 1, 1_000_000_000),
    trustProxy: trustProxy(text(env, 'TRUST_PROXY')),
    logLevel,
    secret,
    secretFile,
    production: text(env, 'NODE_ENV') === 'production',
    maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 1_048_576, 1024, 64 * 1_048_576),
    maxEventsPerRequest: integer(env, 'MAX_EVENTS_PER_REQUEST', 100, 1, 10_000),
    quotaEventsPerDay: integer(env, 'QUOTA_EVENTS_PER_DAY', DEFAULT_QUOTA_EVENTS_PER_DAY, 1, Number.MAX_SAFE_INTEGER),
    quotaBytesPerDay: integer(env, 'QUOTA_BYTES_PER_DAY', DEFAULT_QUOTA_BYTES_PER_DAY, 1, Number.MAX_SAFE_INTEGER),
    logMaxBytes: integer(env, 'LOG_MAX_BYTES', 1024 ** 3, 1024 ** 2, 2 ** 40),
    logMinFreeBytes: integer(env, 'LOG_MIN_FREE_BYTES', 256 * 1024 ** 2, 0, 2 ** 40),
    readBudgetMs: integer(env, 'READ_BUDGET_MS', DEFAULT_READ_BUDGET_MS, 100, 600_000),
    readConnections: integer(env, 'READ_CONNECTIONS', DEFAULT_READ_CONNECTIONS, 1, 64),
    embeddedClusterTemplate: clusterTemplate(text(env, 'EMBEDDED_CLUSTER_TEMPLATE')),
    telegramPublicKey: publicKey(env, 'TELEGRAM_PUBLIC_KEY', TELEGRAM_PRODUCTION_KEY),
    telegramTestPublicKey: publicKey(env, 'TELEGRAM_TEST_PUBLIC_KEY', TELEGRAM_TEST_KEY),
    launchMaxAgeSeconds: integer(env, 'LAUNCH_MAX_AGE_SECONDS', 86_400, 60, 30 * 86_400),
    maxAppsPerOwner: integer(env, 'MAX_APPS_PER_OWNER', 20, 1, 1_000_000),
    envFile,
  };
}

/** EMBEDDED_CLUSTER_TEMPLATE: a directory, "none" (initdb), or unset (the install's own) */
function clusterTemplate(value: string | undefined): string | null | undefined {
  if (value === undefined || value === '') return undefined;
  return value === 'none' ? null : value;
}

// Daily quotas per app (events and bytes per UTC day), so an app's public token cannot fill the operator's disk:
// checked in memory, counts reconciled every few seconds with every node's stored totals (daily_app_usage).
import { named } from '../../db/named-sql.ts';
import type { SqlRunner } from '../../db/sql.ts';
import type { Parsed } from '../../platform/parsed.ts';
import type { QuotaOverrides } from '../../tokens/registry.ts';
import { DAY_MS, dayNumberOf, isoDayOfNumber } from '../days.ts';
import { REFUSALS } from './refusals.ts';

export interface QuotaLimits {
  eventsPerDay: number;
  bytesPerDay: number;
}

export interface QuotaRefusal {
  code: 'dailyEventQuota' | 'dailyByteQuota';
  /** what the owner is told, e.g. "daily event quota reached (1000 events)" */
  reason: string;
  /** seconds until the next UTC day, when the app may send again */
  retryAfterSeconds: number;
}

export interface DayUsage {
  /** UTC day, YYYY-MM-DD */
  day: string;
  events: number;
  bytes: number;
}

/** how often a node reads the totals of every node and the quotas administrators set */
const SYNC_EVERY_MS = 2_000;
/** the largest quota accepted: counts stay exact as JavaScript numbers */
const MAX_QUOTA = Number.MAX_SAFE_INTEGER;

/** "1000", "10000000": the quota as an operator types it */
export function parseQuota(input: string, what: string): Parsed<number> {
  const trimmed = input.trim();
  const value = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || value < 1 || value > MAX_QUOTA) {
    return { ok: false, error: `${what} must be a whole number from 1 to ${MAX_QUOTA}.` };
  }
  return { ok: true, value };
}

export function effectiveLimits(defaults: QuotaLimits, overrides: Partial<QuotaOverrides> | undefined): QuotaLimits {
  return {
    eventsPerDay: overrides?.eventsPerDay ?? defaults.eventsPerDay,
    bytesPerDay: overrides?.bytesPerDay ?? defaults.bytesPerDay,
  };
}

/** what an app has sent today, as the store counts it (every node's commits) */
export async function usageToday(sql: SqlRunner, appId: number, now = new Date()): Promise<DayUsage> {
  const day = now.toISOString().slice(0, 10);
  const [row] = await sql.query<{ events: number; bytes: number }>(
    ...named(
      `SELECT events::float8 AS events, bytes::float8 AS bytes FROM daily_app_usage
       WHERE app_id = {{app}} AND day = {{day}}::date`,
      { app: appId, day },
    ),
  );
  return { day, events: row?.events ?? 0, bytes: row?.bytes ?? 0 };
}

/** one app's counts for the current day */
interface AppDay {
  /** every node's total as last read from the store */
  storedEvents: number;
  storedBytes: number;
  /** admitted here since the read that set the stored totals began */
  localEvents: number;
  localBytes: number;
}

export interface DailyQuotaOptions {
  /** the clock that decides the UTC day (tests move it to the next day) */
  now?: () => number;
  syncEveryMs?: number;
  onError?: (error: unknown) => void;
}

export class DailyQuota {
  private day = -1;
  private syncedDay = -1;
  private apps = new Map<number, AppDay>();
  private overrides = new Map<number, Partial<QuotaOverrides>>();
  private syncing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(
    private readonly sql: SqlRunner,
    private readonly defaults: QuotaLimits,
    private readonly options: DailyQuotaOptions = {},
  ) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.sync(), this.options.syncEveryMs ?? SYNC_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.syncing;
  }

  limits(appId: number): QuotaLimits {
    return effectiveLimits(this.defaults, this.overrides.get(appId));
  }

  /**
   * Counts a request of `events` events and `bytes` bytes against the app's quotas of the current UTC day;
   * answers null when it fits, else the refusal (and counts nothing). A request that would go beyond a
   * quota is refused whole, so nothing beyond it is stored. Only the first request of a day waits for the
   * store (one read shared by all); the others are a map lookup.
   */
  async admit(appId: number, events: number, bytes: number): Promise<QuotaRefusal | null> {
    const now = this.now();
    this.turnDay(dayNumberOf(now));
    if (this.syncedDay !== this.day) await this.sync();
    const limits = this.limits(appId);
    const usage = this.appDay(appId);
    let refused: Pick<QuotaRefusal, 'code' | 'reason'> | null = null;
    if (usage.storedEvents + usage.localEvents + events > limits.eventsPerDay) {
      refused = {
        code: 'dailyEventQuota',
        reason: `${REFUSALS.dailyEventQuota.reason} (${limits.eventsPerDay} events)`,
      };
    } else if (usage.storedBytes + usage.localBytes + bytes > limits.bytesPerDay) {
      refused = { code: 'dailyByteQuota', reason: `${REFUSALS.dailyByteQuota.reason} (${limits.bytesPerDay} bytes)` };
    }
    if (refused !== null)
      return { ...refused, retryAfterSeconds: Math.max(1, Math.ceil(((this.day + 1) * DAY_MS - now) / 1000)) };
    usage.localEvents += events;
    usage.localBytes += bytes;
    return null;
  }

  /**
   * Reads every node's totals of the day and the quotas administrators set; concurrent callers share one
   * read. A failed read is reported and leaves the counts as they are (the next one catches up).
   */
  sync(): Promise<void> {
    this.syncing ??= this.readStore().finally(() => {
      this.syncing = null;
    });
    return this.syncing;
  }

  private async readStore(): Promise<void> {
    this.turnDay(dayNumberOf(this.now()));
    const day = this.day;
    // what was admitted before the read began is in the totals read, once committed
    const taken = new Map(
      [...this.apps].map(([appId, usage]) => [appId, { events: usage.localEvents, bytes: usage.localBytes }]),
    );
    try {
      const [totals, overrides] = await Promise.all([
        this.sql.query<{ app_id: number; events: number; bytes: number }>(
          ...named(
            `SELECT app_id, events::float8 AS events, bytes::float8 AS bytes FROM daily_app_usage WHERE day = {{day}}::date`,
            { day: isoDayOfNumber(day) },
          ),
        ),
        this.sql.query<{ id: number; events: number | null; bytes: number | null }>(
          `SELECT id, quota_events_per_day::float8 AS events, quota_bytes_per_day::float8 AS bytes FROM apps
           WHERE quota_events_per_day IS NOT NULL OR quota_bytes_per_day IS NOT NULL`,
        ),
      ]);
      this.overrides = new Map(overrides.map((row) => [row.id, { eventsPerDay: row.events, bytesPerDay: row.bytes }]));
      if (this.day !== day) return; // a new day began meanwhile: these totals are of no use
      const stored = new Map(totals.map((row) => [row.app_id, row]));
      for (const appId of stored.keys()) this.appDay(appId);
      for (const [appId, usage] of this.apps) {
        usage.storedEvents = stored.get(appId)?.events ?? 0;
        usage.storedBytes = stored.get(appId)?.bytes ?? 0;
        usage.localEvents -= taken.get(appId)?.events ?? 0;
        usage.localBytes -= taken.get(appId)?.bytes ?? 0;
      }
    } catch (error) {
      this.options.onError?.(error);
    }
    if (this.day === day) this.syncedDay = day;
  }

  /** a new UTC day starts every app at zero */
  private turnDay(day: number): void {
    if (day === this.day) return;
    this.day = day;
    this.apps = new Map();
  }

  private appDay(appId: number): AppDay {
    let usage = this.apps.get(appId);
    if (!usage) {
      usage = { storedEvents: 0, storedBytes: 0, localEvents: 0, localBytes: 0 };
      this.apps.set(appId, usage);
    }
    return usage;
  }
}

// Remembers why requests of an app were refused (status, message, reason, origin, time), so its owner can see
// why data is missing. Aggregated in memory and written about once a second; never on the request path.
import { REFUSALS, type RefusalCode } from './refusals.ts';
import type { EventPlane, RejectionRow } from '../write/event-plane.ts';

const MAX_PENDING_KEYS = 10_000;
const MAX_ORIGIN_LENGTH = 256;

export class RefusalLog {
  private pending = new Map<string, RejectionRow>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: EventPlane,
    private readonly flushEveryMs = 1_000,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.flushEveryMs);
    this.timer.unref();
  }

  /**
   * Stores the refusal's status and message. reason: what the owner is told beyond the message (which quota
   * was reached, with its limit); without one the owner reads the refusal's own reason.
   */
  record(appId: number, code: RefusalCode, origin: string | null, reason: string | null = null): void {
    const { status, message } = REFUSALS[code];
    const trimmedOrigin = origin === null ? null : origin.slice(0, MAX_ORIGIN_LENGTH);
    const key = `${appId}\n${status}\n${message}\n${trimmedOrigin}\n${reason}`;
    const existing = this.pending.get(key);
    if (existing) {
      existing.count++;
      existing.at = new Date();
    } else if (this.pending.size < MAX_PENDING_KEYS) {
      this.pending.set(key, { appId, at: new Date(), status, message, origin: trimmedOrigin, reason, count: 1 });
    }
  }

  /** Writes what is pending; concurrent callers share one write. Failures are reported, not thrown. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const rows = [...this.pending.values()];
      this.pending = new Map();
      try {
        await this.store.addRejections(rows);
      } catch (error) {
        this.onError(error);
      }
    });
    return this.flushing;
  }

  async recent(appId: number, limit = 10): Promise<RejectionRow[]> {
    await this.flush();
    return this.store.recentRejections(appId, limit);
  }

  /** each app's last refused request, the ones still in memory included */
  async last(appIds: readonly number[]): Promise<Map<number, RejectionRow>> {
    await this.flush();
    return this.store.lastRejections(appIds);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }
}

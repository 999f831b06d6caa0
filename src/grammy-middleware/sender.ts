// Sends bot events to POST /events in batches, off the bot's update handling: a timer or a full batch starts a
// send, one request is in flight at a time, and failures are retried a bounded number of times, then reported.

export interface SenderOptions {
  /** the service's POST /events URL */
  url: string;
  serverKey: string;
  /** how long an event may wait for others to share its request */
  flushIntervalMs: number;
  maxBatchSize: number;
  /** events kept while the service is unreachable; the oldest are dropped beyond it, so memory stays bounded */
  maxQueuedEvents: number;
  /** further attempts after a network error, a 5xx or a 429 */
  retries: number;
  /** the first retry's delay, doubled for each next one */
  retryDelayMs: number;
  timeoutMs: number;
  /** the bot's numeric id once known: sent beside the events, so an app registered without it gets it */
  botId(): number | undefined;
  fetch: typeof fetch;
  onError(error: Error): void;
}

const MAX_RETRY_DELAY_MS = 60_000;

/** the header the bot's id travels in (the service reads it with a server key only) */
export const BOT_ID_HEADER = 'tma-bot-id';

/** the service's answers that a later attempt can change; any other refusal would be refused again */
function isRetryable(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}

/** Retry-After in seconds (what a rate limit answers), else the doubling backoff */
function retryDelay(options: SenderOptions, attempt: number, retryAfter: string | null): number {
  const seconds = retryAfter === null ? Number.NaN : Number(retryAfter);
  const delay = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : options.retryDelayMs * 2 ** attempt;
  return Math.min(delay, MAX_RETRY_DELAY_MS);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class EventSender<Event> {
  private queue: Event[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private sending: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly options: SenderOptions) {}

  /** queues the event; never waits and never throws */
  add(event: Event): void {
    if (this.stopped) return;
    this.queue.push(event);
    if (this.queue.length > this.options.maxQueuedEvents) {
      const dropped = this.queue.splice(0, this.queue.length - this.options.maxQueuedEvents);
      this.report(new Error(`dropped ${dropped.length} event(s): the queue is full while the service is unreachable`));
    }
    if (this.queue.length >= this.options.maxBatchSize) void this.send();
    else this.schedule();
  }

  /** resolves once every event queued so far has been delivered or given up on */
  async flush(): Promise<void> {
    this.clearTimer();
    while (this.queue.length > 0 || this.sending) await this.send();
  }

  /** flushes and accepts no more events: for a clean shutdown after bot.stop() */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.flush();
  }

  private schedule(): void {
    if (this.timer !== undefined || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.send();
    }, this.options.flushIntervalMs);
    // a pending flush must not keep the bot's process alive; stop() is what delivers the last events
    this.timer.unref?.();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private send(): Promise<void> {
    this.clearTimer();
    this.sending ??= this.drain().finally(() => {
      this.sending = null;
      // events queued while the last request was finishing
      if (this.queue.length > 0) this.schedule();
    });
    return this.sending;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) await this.deliver(this.queue.splice(0, this.options.maxBatchSize));
  }

  private async deliver(batch: Event[]): Promise<void> {
    const body = JSON.stringify(batch);
    for (let attempt = 0; ; attempt++) {
      const lastAttempt = attempt >= this.options.retries;
      try {
        const botId = this.options.botId();
        const response = await this.options.fetch(this.options.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${this.options.serverKey}`,
            ...(botId === undefined ? {} : { [BOT_ID_HEADER]: String(botId) }),
          },
          body,
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
        if (response.ok) {
          await response.body?.cancel();
          return;
        }
        const answer = (await response.text().catch(() => '')).slice(0, 500);
        if (!isRetryable(response.status) || lastAttempt) {
          this.report(new Error(`the service refused ${batch.length} event(s): ${response.status} ${answer}`));
          return;
        }
        await sleep(retryDelay(this.options, attempt, response.headers.get('retry-after')));
      } catch (error) {
        if (lastAttempt) {
          const reason = error instanceof Error ? error.message : String(error);
          this.report(new Error(`could not send ${batch.length} event(s): ${reason}`, { cause: error }));
          return;
        }
        await sleep(retryDelay(this.options, attempt, null));
      }
    }
  }

  private report(error: Error): void {
    try {
      this.options.onError(error);
    } catch {
      // an error handler that throws must not reach the bot either
    }
  }
}

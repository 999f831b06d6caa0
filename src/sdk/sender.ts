// The outbox: events wait in localStorage until the service confirms them, go out in batches of up to
// 20, and are retried with jittered backoff on network errors and server trouble. A permanent refusal
// drops the refused events (only those, when the service names them) and later events go on.
import { load, local, save, uuid } from './storage.ts';

export type Fields = Record<string, unknown>;

interface Item {
  id: string;
  event: Fields;
}

export interface SenderOptions {
  endpoint: string;
  token: string;
  storageKey: string;
  batchSize: number;
  flushIntervalMs: number;
  log: (...parts: unknown[]) => void;
}

const MAX_QUEUED = 1000;
const MAX_BACKOFF_MS = 60_000;

export class Sender {
  private items: Item[];
  /** ids of the events in a request that has not been answered yet */
  private readonly sending = new Set<string>();
  private busy = false;
  private notBefore = 0;
  private failures = 0;
  private readonly reported = new Set<string>();

  constructor(private readonly options: SenderOptions) {
    const stored = load<Item[]>(local, options.storageKey, []);
    this.items = Array.isArray(stored) ? stored : [];
    setInterval(() => void this.flush(), options.flushIntervalMs);
    addEventListener('online', () => {
      this.notBefore = 0;
      void this.flush();
    });
  }

  add(event: Fields): void {
    this.items.push({ id: uuid(), event });
    if (this.items.length > MAX_QUEUED) this.items.splice(0, this.items.length - MAX_QUEUED);
    this.persist();
  }

  /**
   * Sends batches until the outbox is empty or the service asks to wait. keepalive: the page is going away,
   * so the events not already on their way go out now, with requests that outlive the page, instead of
   * waiting behind a request in flight (which the page's end may cancel).
   */
  async flush(keepalive = false): Promise<void> {
    if (this.busy && !keepalive) return;
    const owner = !this.busy;
    this.busy = true;
    try {
      while (Date.now() >= this.notBefore && (await this.sendBatch(keepalive)));
    } finally {
      if (owner) this.busy = false;
    }
  }

  /** true when a batch was settled and the next one may follow at once */
  private async sendBatch(keepalive: boolean): Promise<boolean> {
    const batch = this.items.filter((item) => !this.sending.has(item.id)).slice(0, this.options.batchSize);
    if (batch.length === 0) return false;
    for (const item of batch) this.sending.add(item.id);
    try {
      return await this.post(batch, keepalive);
    } finally {
      for (const item of batch) this.sending.delete(item.id);
    }
  }

  private async post(batch: Item[], keepalive: boolean): Promise<boolean> {
    let response: Response;
    let body: { message?: string; errors?: string[] };
    try {
      const json = JSON.stringify(batch.map((item) => item.event));
      response = await fetch(`${this.options.endpoint}/events`, {
        method: 'POST',
        // browsers refuse keepalive bodies beyond 64 KiB (in flight, per page): big batches go without
        keepalive: keepalive && json.length < 20_000,
        headers: { 'Content-Type': 'application/json', 'ANALYTICS-Auth-Token': this.options.token },
        body: json,
      });
      body = await response.json().catch(() => ({}));
    } catch (error) {
      return this.backOff(`network error: ${String(error)}`);
    }
    if (response.status === 201) {
      this.failures = 0;
      return this.remove(batch);
    }
    if (response.status === 429) {
      this.notBefore = Date.now() + (Number(response.headers.get('retry-after')) || 2) * 1000;
      return false;
    }
    // "Failed to record" is the service's own storage trouble: the events are fine, try again later
    if (response.status >= 500 || body.message === 'Failed to record')
      return this.backOff(`${response.status} ${body.message ?? ''}`);
    this.report(`${response.status} ${body.message ?? ''}`, body.errors);
    const refused = (body.errors ?? []).map((error) => /^events\[(\d+)\]/.exec(error)?.[1]);
    // the service named the bad events: drop just those and send the rest again
    if (refused.length > 0 && refused.every((index) => index !== undefined)) {
      return this.remove(batch.filter((_, index) => refused.includes(String(index))));
    }
    return this.remove(batch);
  }

  private backOff(reason: string): false {
    this.failures++;
    const delay = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (this.failures - 1)) * (0.5 + Math.random());
    this.notBefore = Date.now() + delay;
    this.options.log(`${reason}; retrying in ${Math.round(delay)} ms`);
    return false;
  }

  private remove(done: Item[]): true {
    const ids = new Set(done.map((item) => item.id));
    this.items = this.items.filter((item) => !ids.has(item.id));
    this.persist();
    return true;
  }

  private report(problem: string, errors?: string[]): void {
    if (this.reported.has(problem)) return;
    this.reported.add(problem);
    this.options.log(`events refused: ${problem}`, errors ?? '');
  }

  private persist(): void {
    save(local, this.options.storageKey, this.items);
  }
}

// Load for robustness suites: batches of events that each carry a unique marker (custom_data.seq), sent
// by concurrent client loops, with every answer (or transport failure) recorded per request.
import crypto from 'node:crypto';

/** mulberry32: the same seed gives the same sequence, so batch sizes are reproducible */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Batch {
  id: number;
  /** the exact request body, kept so a retry sends the same bytes */
  body: string;
  /** the custom_data.seq of each event in the body */
  seqs: number[];
}

export interface BatchFactoryOptions {
  seed?: number;
  minEvents?: number;
  maxEvents?: number;
  /** written into every event's custom_data.run */
  run?: string;
  /** keep every batch made in `batches` (default true; false for long runs) */
  keep?: boolean;
}

/** Makes request bodies of minEvents..maxEvents custom events, each with a unique seq and session_id. */
export class BatchFactory {
  private nextSeq = 0;
  private nextId = 0;
  private readonly random: () => number;
  private readonly minEvents: number;
  private readonly maxEvents: number;
  private readonly run: string;
  private readonly keep: boolean;
  readonly batches: Batch[] = [];

  constructor(
    private readonly appName: string,
    options: BatchFactoryOptions = {},
  ) {
    this.random = seededRandom(options.seed ?? 1);
    this.minEvents = options.minEvents ?? 1;
    this.maxEvents = options.maxEvents ?? 20;
    this.run = options.run ?? crypto.randomUUID();
    this.keep = options.keep ?? true;
  }

  next(): Batch {
    const size = this.minEvents + Math.floor(this.random() * (this.maxEvents - this.minEvents + 1));
    const events: Record<string, unknown>[] = [];
    const seqs: number[] = [];
    for (let i = 0; i < size; i++) {
      const seq = this.nextSeq++;
      seqs.push(seq);
      events.push({
        event_name: 'custom-event',
        session_id: crypto.randomUUID(),
        user_id: 100_000 + (seq % 997),
        app_name: this.appName,
        is_premium: seq % 2 === 0,
        platform: 'tdesktop',
        locale: 'en',
        client_timestamp: String(Date.now()),
        custom_data: { seq, run: this.run },
      });
    }
    const batch = { id: this.nextId++, body: JSON.stringify(events), seqs };
    if (this.keep) this.batches.push(batch);
    return batch;
  }

  /** every seq handed out so far */
  get seqCount(): number {
    return this.nextSeq;
  }
}

export interface Answer {
  /** null when no HTTP answer came (connection refused or reset, timeout) */
  status: number | null;
  text: string;
  error?: string;
  ms: number;
}

/** answers counted by status and text, e.g. "120 × 201 {…}; 3 × no answer (TimeoutError: …)" */
export function tallyAnswers(answers: Answer[]): string {
  const counts = new Map<string, number>();
  for (const answer of answers) {
    const key = answer.status === null ? `no answer (${answer.error})` : `${answer.status} ${answer.text}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => `${count} × ${key}`).join('; ');
}

/** the page origin the fault suites' clients send from (their apps allow its domain) */
export const APP_ORIGIN = 'https://app.example.com';
/** the spec's answers, byte for byte: a 201, and the 400 of a request that could not be stored */
export const SUCCESS = '{"message":"Success record."}';
export const FAILED = '{"message":"Failed to record"}';

export interface SendOptions {
  token: string;
  origin?: string;
  timeoutMs?: number;
}

/** POST /events with a raw body; never throws: transport failures become status null. */
export async function sendBody(baseUrl: string, body: string, options: SendOptions): Promise<Answer> {
  const started = performance.now();
  try {
    const response = await fetch(`${baseUrl}/events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'ANALYTICS-Auth-Token': options.token,
        origin: options.origin ?? APP_ORIGIN,
      },
      body,
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    const text = await response.text();
    return { status: response.status, text, ms: performance.now() - started };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return {
      status: null,
      text: '',
      error: `${(error as Error).name}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
      ms: performance.now() - started,
    };
  }
}

export interface Outcome extends Answer {
  batch: Batch;
  startedAt: number;
}

export interface LoadOptions {
  concurrency: number;
  /** checked before each request; the loops end when it says false */
  keepGoing: () => boolean;
  next: () => Batch;
  send: (batch: Batch) => Promise<Answer>;
  /** a hard cap on requests per loop, so a loop can never run away */
  maxRequestsPerLoop?: number;
  /** when given, each outcome goes here instead of into the result (long runs keep no bodies) */
  onOutcome?: (outcome: Outcome) => void;
}

/** Runs `concurrency` client loops, each sending one request at a time; resolves with every outcome. */
export async function runLoad(options: LoadOptions): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  const cap = options.maxRequestsPerLoop ?? 100_000;
  const loop = async () => {
    for (let i = 0; i < cap && options.keepGoing(); i++) {
      const batch = options.next();
      const startedAt = performance.now();
      const answer = await options.send(batch);
      const outcome = { ...answer, batch, startedAt };
      if (options.onOutcome) options.onOutcome(outcome);
      else outcomes.push(outcome);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, loop));
  return outcomes;
}

/** how many requests are waiting for an answer right now, for load that must be in flight at some instant */
export class InFlight {
  count = 0;
  wrap<T>(promise: Promise<T>): Promise<T> {
    this.count++;
    return promise.finally(() => this.count--);
  }
}

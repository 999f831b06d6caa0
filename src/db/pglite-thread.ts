// The main thread's handle on the embedded PGlite, which runs on a thread of its own
// (src/db/pglite-thread-worker.ts): PGlite's interface, carried over messages.
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { messages, type QueryOptions as PGliteQueryOptions, type Results } from '@electric-sql/pglite';
import { createCluster } from './pglite-cluster.ts';
import { Utf8Text } from './sql.ts';
import type { ThreadError, ThreadQueryResult, ThreadReply, ThreadRequest } from './pglite-thread-protocol.ts';

/** the part of PGlite's interface the SQL runner and the Prisma adapter use */
export interface PGliteSession {
  query<Row>(
    sql: string,
    params?: unknown[],
    options?: Pick<PGliteQueryOptions, 'rowMode' | 'parsers'>,
  ): Promise<Results<Row>>;
  exec(sql: string): Promise<Results[]>;
}
export interface PGliteTransaction extends PGliteSession {
  rollback(): Promise<void>;
  readonly closed: boolean;
}
export interface PGliteHandle extends PGliteSession {
  /** a named statement: prepared once on PGlite's session, then executed with these parameters */
  execute<Row>(name: string, sql: string, params?: unknown[]): Promise<{ rows: Row[] }>;
  transaction<T>(fn: (tx: PGliteTransaction) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

type Request = ThreadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** parameters as they cross to the thread: Utf8Text as its bytes, with their positions */
function wireParams(params: unknown[] = []): { params: unknown[]; utf8: number[] } {
  const utf8: number[] = [];
  const wire = params.map((value, index) => {
    if (!(value instanceof Utf8Text)) return value;
    utf8.push(index);
    return value.bytes;
  });
  return { params: wire, utf8 };
}

function rebuildError(error: ThreadError): Error {
  if (!error.database) return new Error(error.message);
  return Object.assign(new messages.DatabaseError(error.message, 0, 'error'), error.fields);
}

/**
 * Starts the PGlite thread (on a new data directory, once createCluster has made its cluster) and gives
 * PGlite's interface over it. Statements run there one at a time, as on PGlite itself; results come back
 * parsed, except the types the caller brings its own parsers for, which travel as text and are parsed here
 * (functions cannot cross threads).
 */
export async function startPGliteThread(pgdata: string): Promise<PGliteHandle> {
  await createCluster(pgdata);
  return startThread(pgdata);
}

/**
 * Severities after which PGlite's engine is left in a state no later statement survives: after a PANIC (a WAL
 * segment that could not be allocated on a full disk) every statement failed ("XLogBeginInsert was already called",
 * "cannot drop active portal") and some spun without end. Committed data is safe (the WAL is synced at each commit).
 */
const WEDGING_SEVERITIES = new Set(['PANIC', 'FATAL']);
/** the wait before a new thread is tried again when it failed to open the data directory (the disk still full) */
const FIRST_REOPEN_MS = 500;
const LAST_REOPEN_MS = 10_000;
/** a new thread that has not opened the data directory by then is stopped and tried again (a startup that hangs) */
const OPEN_WAIT_MS = 60_000;
/** how long close waits for PGlite to close before the thread is stopped anyway (a wedged engine never answers) */
const CLOSE_WAIT_MS = 3_000;

/** statements sent while the engine is being replaced fail at once with this */
export class EmbeddedStoreRestartingError extends Error {
  constructor(cause: string) {
    super(`the embedded database is reopening after a failure: ${cause}`);
    this.name = 'EmbeddedStoreRestartingError';
  }
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

/** one PGlite thread: its worker, the requests it has not answered, and whether it opened */
interface ThreadRun {
  worker: Worker;
  pending: Map<number, Pending>;
  ready: Promise<void>;
}

/**
 * Starts a thread on pgdata. onBroken is called once when the engine cannot go on: a reply of a wedging severity
 * (after the statement that met it has its error), or the thread failing or exiting by itself.
 */
function runThread(pgdata: string, onBroken: (run: ThreadRun, reason: string) => void): ThreadRun {
  // the thread loads TypeScript through tsx's API, whatever loader (or none) this thread runs under
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./pglite-thread-worker.ts', import.meta.url).href;
  const worker = new Worker(
    `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`,
    {
      eval: true,
      workerData: { pgdata },
    },
  );
  const pending = new Map<number, Pending>();
  const ready = new Promise<void>((resolve, reject) => pending.set(0, { resolve: () => resolve(), reject }));
  const run: ThreadRun = { worker, pending, ready };
  worker.on('message', (reply: ThreadReply) => {
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.error) waiting?.reject(rebuildError(reply.error));
    else waiting?.resolve(reply.result);
    const severity = reply.error?.fields.severity;
    if (reply.id !== 0 && severity && WEDGING_SEVERITIES.has(severity)) onBroken(run, reply.error!.message);
  });
  const stopped = (reason: string) => {
    for (const waiting of pending.values()) waiting.reject(new Error(reason));
    pending.clear();
    onBroken(run, reason);
  };
  worker.on('error', (error) => stopped(`the embedded database thread failed: ${error.message}`));
  worker.on('exit', () => stopped('the embedded database thread has stopped'));
  return run;
}

async function startThread(pgdata: string): Promise<PGliteHandle> {
  let current = runThread(pgdata, (run, reason) => replace(run, reason));
  let nextId = 1;
  /** set while the engine is being replaced, and for good once closed */
  let unavailable: Error | undefined;
  let closing = false;

  const failAll = (run: ThreadRun, error: Error) => {
    for (const waiting of run.pending.values()) waiting.reject(error);
    run.pending.clear();
  };

  /** a wedged or stopped engine: its thread is stopped and a new one opens the same data directory, until one does */
  const replace = (run: ThreadRun, reason: string) => {
    if (run !== current || unavailable) return;
    unavailable = new EmbeddedStoreRestartingError(reason);
    failAll(run, unavailable);
    const stopped = run.worker.terminate();
    if (closing) return;
    void (async () => {
      // never two engines on one data directory: the old thread is gone before a new one opens it
      await stopped;
      for (let waitMs = FIRST_REOPEN_MS; !closing; waitMs = Math.min(LAST_REOPEN_MS, waitMs * 2)) {
        const next = runThread(pgdata, (broken, why) => replace(broken, why));
        current = next;
        try {
          const opening = sleep(OPEN_WAIT_MS, 'timeout' as const, { ref: false });
          if ((await Promise.race([next.ready, opening])) === 'timeout') throw new Error('not open in time');
          if (closing) break;
          unavailable = undefined;
          return;
        } catch {
          // the data directory could not be opened yet (recovery needs space the disk does not have)
          await next.worker.terminate();
          await sleep(waitMs);
        }
      }
      await current.worker.terminate();
    })();
  };

  const call = (request: Request): Promise<unknown> => {
    if (unavailable) return Promise.reject(unavailable);
    const id = nextId++;
    const run = current;
    return new Promise((resolve, reject) => {
      run.pending.set(id, { resolve, reject });
      try {
        run.worker.postMessage({ ...request, id });
      } catch (error) {
        // a parameter that cannot be copied to another thread
        run.pending.delete(id);
        reject(error);
      }
    });
  };

  const session = (tx?: number): PGliteSession => ({
    async query<Row>(sql: string, params?: unknown[], options?: Pick<PGliteQueryOptions, 'rowMode' | 'parsers'>) {
      const parsers = options?.parsers ?? {};
      const rawTypes = Object.keys(parsers).map(Number);
      const result = (await call({
        op: 'query',
        sql,
        ...wireParams(params),
        rowMode: options?.rowMode,
        rawTypes,
        tx,
      })) as ThreadQueryResult;
      if (rawTypes.length > 0) {
        result.fields.forEach((field, column) => {
          // PGlite calls a parser with the type too
          const parse = parsers[field.dataTypeID] as ((value: string, type: number) => unknown) | undefined;
          if (!parse) return;
          const key = options?.rowMode === 'array' ? column : field.name;
          for (const row of result.rows as Record<string | number, unknown>[]) {
            if (row[key] !== null) row[key] = parse(row[key] as string, field.dataTypeID);
          }
        });
      }
      return result as Results<Row>;
    },
    // scripts (migrations, SET ...): no caller reads their results, so none are carried back
    async exec(sql: string) {
      await call({ op: 'exec', sql, tx });
      return [];
    },
  });

  await current.ready.catch(async (error: unknown) => {
    closing = true;
    await current.worker.terminate();
    throw error;
  });
  return {
    ...session(),
    async execute<Row>(name: string, sql: string, params?: unknown[]) {
      return (await call({ op: 'execute', name, sql, ...wireParams(params) })) as { rows: Row[] };
    },
    async transaction<T>(fn: (tx: PGliteTransaction) => Promise<T>): Promise<T> {
      const tx = (await call({ op: 'begin' })) as number;
      let closed = false;
      const handle: PGliteTransaction = {
        ...session(tx),
        async rollback() {
          await call({ op: 'rollback', tx });
          closed = true;
        },
        get closed() {
          return closed;
        },
      };
      let result: T;
      try {
        result = await fn(handle);
      } catch (error) {
        await call({ op: 'end', tx, commit: false }).catch(() => undefined);
        throw error;
      }
      await call({ op: 'end', tx, commit: true });
      return result;
    },
    async close() {
      closing = true;
      const run = current;
      if (!unavailable) {
        // a wedged engine may never answer: the thread is stopped after a while anyway (commits are on disk already)
        const closed = call({ op: 'close' }).catch(() => undefined);
        await Promise.race([closed, sleep(CLOSE_WAIT_MS, undefined, { ref: false })]);
      }
      unavailable = new Error('the embedded database has stopped: it was closed');
      failAll(run, unavailable);
      await run.worker.terminate();
    },
  };
}

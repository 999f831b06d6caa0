// The main thread's handle on the embedded PGlite, which runs on a thread of its own (started by
// pglite-thread-spawn.ts): PGlite's interface, carried over messages, with reads kept behind everything else.
import { setTimeout as sleep } from 'node:timers/promises';
import type { QueryOptions as PGliteQueryOptions, Results } from '@electric-sql/pglite';
import { openCluster } from './first-start.ts';
import type { CreateClusterOptions } from './pglite-cluster.ts';
import type { ThreadMemory } from '../../platform/metrics.ts';
import type { ThreadCall, ThreadQueryResult } from './pglite-thread-protocol.ts';
import { deadThread, spawnThread, type Thread } from './pglite-thread-spawn.ts';
import { Utf8Text } from '../sql.ts';
import { ReadBudgetError } from '../read-budget.ts';

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
  /** reads: behind every other statement, one at a time, within their budget (ReadBudgetError past it) */
  reads: Pick<PGliteSession, 'query'>;
  /** how many times the thread was ended and started again to stop a read that outran its budget */
  readonly restarts: number;
  /** what the thread holds (its heap, PGlite's WebAssembly memory) */
  memory(): Promise<ThreadMemory>;
  close(): Promise<void>;
}

export interface PGliteReadOptions {
  /** the longest a read may take from its call to its answer, and may run on the thread */
  budgetMs: number;
  /** the most reads that may wait for the thread; one more is refused at once */
  queueLimit: number;
  /** told when a read was stopped by starting the thread again, with how long the new thread took to start */
  onRestart?: (ms: number) => void;
}

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

/**
 * Starts the PGlite thread (on a new data directory, once openCluster has made its cluster) and gives
 * PGlite's interface over it. Statements run there one at a time, as on PGlite itself; results come back
 * parsed, except the types the caller brings its own parsers for, which travel as text and are parsed here
 * (functions cannot cross threads).
 *
 * PGlite cannot interrupt a statement (its timers cannot fire while the WebAssembly engine runs one), so reads
 * are kept from the statements the service depends on here, on the main thread: the loader's, the control
 * plane's and every other caller's statements go to the thread as they come; a read goes only when none of
 * those is running or waiting and no transaction is open, one at a time, from a bounded queue; while it runs
 * the others wait here. A read still running at its budget is stopped by ending the thread, which then runs
 * nothing else (no write, no transaction: a committed write is on disk, its WAL synced), and starting it again.
 *
 * An engine left wedged (a PANIC on a full disk) or a thread that stops by itself is replaced the same way, retried
 * until a new thread opens the data directory (space may have to return first); meanwhile every statement fails at
 * once with EmbeddedStoreRestartingError, which the loader backs off from.
 */
export async function startPGliteThread(
  pgdata: string,
  readOptions: PGliteReadOptions,
  clusterOptions: CreateClusterOptions = {},
): Promise<PGliteHandle> {
  const onBroken = (broken: Thread, reason: string) => replace(broken, reason);
  let thread = await openCluster(
    pgdata,
    clusterOptions,
    () => spawnThread(pgdata, onBroken),
    (opened) => opened.kill(),
  );
  const { budgetMs, queueLimit } = readOptions;

  /** statements other than reads sent to the thread and not answered yet */
  let inFlight = 0;
  let openTransactions = 0;
  /** sends held while a read runs or the thread starts again */
  const held: { send: () => void; reject: (error: Error) => void }[] = [];
  const waitingReads: PendingRead[] = [];
  let running: PendingRead | null = null;
  let restarting: Promise<void> | null = null;
  let restarts = 0;
  let closing = false;
  /** set while a wedged or stopped engine is being replaced: statements fail at once meanwhile */
  let unavailable: Error | null = null;

  const pump = () => {
    if (running || restarting) return;
    while (held.length > 0) held.shift()!.send();
    if (inFlight > 0 || openTransactions > 0) return;
    const next = waitingReads.shift();
    if (next) runRead(next);
  };

  const call = (request: ThreadCall): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (unavailable) return reject(unavailable);
      const send = () => {
        inFlight++;
        thread
          .call(request)
          .then(resolve, reject)
          .finally(() => {
            inFlight--;
            pump();
          });
      };
      if (running || restarting) held.push({ send, reject });
      else send();
    });

  /** ends the thread the read runs on and starts a new one; every held statement waits for it */
  const restart = (owner: Thread) => {
    restarting = (async () => {
      const started = performance.now();
      await owner.kill();
      try {
        thread = await spawnThread(pgdata, onBroken);
        restarts++;
        readOptions.onRestart?.(Math.round(performance.now() - started));
      } catch (error) {
        const failed = deadThread(new Error(`could not start again: ${(error as Error).message}`));
        thread = failed;
        replace(failed, (error as Error).message);
      }
    })().finally(() => {
      restarting = null;
      pump();
    });
  };

  /** everything waiting fails with this: the engine is being replaced, or closed */
  const failWaiting = (error: Error) => {
    for (const entry of held.splice(0)) entry.reject(error);
    for (const waiting of waitingReads.splice(0)) waiting.settle(error);
    if (running) {
      running.settle(error);
      running = null;
    }
  };

  /** a wedged or stopped engine: its thread is ended and a new one opens the same data directory, until one does */
  const replace = (broken: Thread, reason: string) => {
    if (broken !== thread || unavailable || closing) return;
    unavailable = new EmbeddedStoreRestartingError(reason);
    failWaiting(unavailable);
    void (async () => {
      // never two engines on one data directory: the old thread is gone before a new one opens it
      await broken.kill();
      for (let waitMs = FIRST_REOPEN_MS; !closing; waitMs = Math.min(LAST_REOPEN_MS, waitMs * 2)) {
        try {
          const next = await spawnThread(pgdata, onBroken, OPEN_WAIT_MS);
          if (closing) {
            await next.kill();
            return;
          }
          thread = next;
          unavailable = null;
          pump();
          return;
        } catch {
          // the data directory could not be opened yet (recovery needs space the disk does not have)
          await sleep(waitMs);
        }
      }
    })();
  };

  const runRead = (read: PendingRead) => {
    running = read;
    const owner = thread;
    const stop = setTimeout(() => {
      if (running !== read) return;
      running = null;
      read.settle(new ReadBudgetError(budgetMs, 'slow'));
      restart(owner);
    }, budgetMs);
    owner
      .call(read.request)
      .then(
        (result) => read.settle(undefined, result),
        (error: Error) => read.settle(error),
      )
      .finally(() => {
        clearTimeout(stop);
        if (running !== read) return;
        running = null;
        pump();
      });
  };

  const read = (request: ThreadCall): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (closing) return reject(new Error('the embedded database thread has stopped'));
      if (unavailable) return reject(unavailable);
      if (waitingReads.length >= queueLimit) return reject(new ReadBudgetError(budgetMs, 'busy'));
      let answered = false;
      const entry: PendingRead = {
        request,
        settle(error, result) {
          if (answered) return;
          answered = true;
          clearTimeout(deadline);
          if (error) reject(error);
          else resolve(result);
        },
      };
      // the caller's answer within the budget, however long the read waited before it ran
      const deadline = setTimeout(() => {
        const at = waitingReads.indexOf(entry);
        if (at >= 0) waitingReads.splice(at, 1);
        entry.settle(new ReadBudgetError(budgetMs, 'slow'));
      }, budgetMs);
      waitingReads.push(entry);
      pump();
    });

  return {
    ...session(call),
    reads: session(read),
    get restarts() {
      return restarts;
    },
    memory: async () => (await call({ op: 'memory' })) as ThreadMemory,
    async execute<Row>(name: string, sql: string, params?: unknown[]) {
      return (await call({ op: 'execute', name, sql, ...wireParams(params) })) as { rows: Row[] };
    },
    async transaction<T>(fn: (tx: PGliteTransaction) => Promise<T>): Promise<T> {
      openTransactions++;
      try {
        const tx = (await call({ op: 'begin' })) as number;
        let closed = false;
        const handle: PGliteTransaction = {
          ...session(call, tx),
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
      } finally {
        openTransactions--;
        pump();
      }
    },
    async close() {
      closing = true;
      for (const waiting of waitingReads.splice(0))
        waiting.settle(new Error('the embedded database thread has stopped'));
      if (!unavailable) {
        // after a read still running (its budget bounds the wait): PGlite closes cleanly; a wedged engine may never
        // answer, so the thread is stopped after a while anyway (commits are on disk already)
        const closed = call({ op: 'close' }).catch(() => undefined);
        await Promise.race([closed, sleep(CLOSE_WAIT_MS, undefined, { ref: false })]);
      }
      await restarting;
      failWaiting(new Error('the embedded database has stopped: it was closed'));
      await thread.kill();
    },
  };
}

interface PendingRead {
  request: ThreadCall;
  settle(error: Error | undefined, result?: unknown): void;
}

/** PGlite's session interface over a way of sending statements to the thread */
function session(send: (request: ThreadCall) => Promise<unknown>, tx?: number): PGliteSession {
  return {
    async query<Row>(sql: string, params?: unknown[], options?: Pick<PGliteQueryOptions, 'rowMode' | 'parsers'>) {
      const parsers = options?.parsers ?? {};
      const rawTypes = Object.keys(parsers).map(Number);
      const result = (await send({
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
      await send({ op: 'exec', sql, tx });
      return [];
    },
  };
}

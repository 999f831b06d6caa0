// The main thread's handle on the embedded PGlite, which runs on a thread of its own
// (src/db/pglite-thread-worker.ts): PGlite's interface, carried over messages.
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

async function startThread(pgdata: string): Promise<PGliteHandle> {
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
  const pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let stopped: Error | undefined;
  const ready = new Promise<void>((resolve, reject) => pending.set(0, { resolve: () => resolve(), reject }));
  worker.on('message', (reply: ThreadReply) => {
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.error) waiting?.reject(rebuildError(reply.error));
    else waiting?.resolve(reply.result);
  });
  const stop = (error: Error) => {
    stopped ??= error;
    for (const waiting of pending.values()) waiting.reject(stopped);
    pending.clear();
  };
  worker.on('error', (error) => stop(new Error(`the embedded database thread failed: ${error.message}`)));
  worker.on('exit', () => stop(new Error('the embedded database thread has stopped')));

  const call = (request: Request): Promise<unknown> => {
    if (stopped) return Promise.reject(stopped);
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      try {
        worker.postMessage({ ...request, id });
      } catch (error) {
        // a parameter that cannot be copied to another thread
        pending.delete(id);
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

  await ready.catch(async (error: unknown) => {
    await worker.terminate();
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
      if (!stopped) await call({ op: 'close' }).catch(() => undefined);
      await worker.terminate();
    },
  };
}

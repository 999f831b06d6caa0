// The embedded PGlite's own thread: opens the data directory and runs the statements the main thread sends,
// so WASM PostgreSQL never blocks the HTTP event loop (it gets the machine's other core instead).
import { parentPort, workerData } from 'node:worker_threads';
import { messages, type PGlite, type Transaction } from '@electric-sql/pglite';
import { openDurablePGlite } from './durable-pglite.ts';
import { namedStatements } from './pglite-named-statements.ts';
import type { ThreadMemory } from '../../platform/metrics.ts';
import type { ThreadError, ThreadReply, ThreadRequest } from './pglite-thread-protocol.ts';

const port = parentPort!;
const { pgdata } = workerData as { pgdata: string };

/** the DatabaseError fields a caller may read (the error object also holds the query's parameters and options) */
const ERROR_FIELDS = [
  'severity',
  'code',
  'detail',
  'hint',
  'position',
  'where',
  'schema',
  'table',
  'column',
  'dataType',
  'constraint',
] as const;

function describeError(error: unknown): ThreadError {
  const fields: Record<string, string> = {};
  for (const field of ERROR_FIELDS) {
    const value = (error as Record<string, unknown> | null)?.[field];
    if (typeof value === 'string') fields[field] = value;
  }
  return {
    message: String((error as Error | null)?.message ?? error),
    database: error instanceof messages.DatabaseError,
    fields,
  };
}

/** parsers that keep the values of these types as the text PostgreSQL sent: the caller's parsers run on its thread */
const rawParsers = new Map<string, Record<number, (value: string) => string>>();
function keepRaw(types: number[]): Record<number, (value: string) => string> | undefined {
  if (types.length === 0) return undefined;
  const key = types.join(',');
  let parsers = rawParsers.get(key);
  if (!parsers) {
    parsers = Object.fromEntries(types.map((type) => [type, (value: string) => value]));
    rawParsers.set(key, parsers);
  }
  return parsers;
}

const transactions = new Map<
  number,
  { tx: Transaction; end: { resolve: () => void; reject: (error: Error) => void }; done: Promise<unknown> }
>();
let nextTransaction = 1;

/** the session a statement runs on: an open transaction's, or PGlite's own */
const sessionOf = (db: PGlite, tx: number | undefined): PGlite | Transaction =>
  tx === undefined ? db : transactions.get(tx)!.tx;

/** the parameters sent as UTF-8 bytes made strings (here, off the main thread) */
function withText(params: unknown[] | undefined, utf8: number[]): unknown[] | undefined {
  if (!params || utf8.length === 0) return params;
  const copy = [...params];
  for (const index of utf8) {
    const bytes = copy[index] as Uint8Array;
    copy[index] = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  }
  return copy;
}

/** PGlite keeps its Emscripten module private: its memory is read through it */
function memory(db: PGlite): ThreadMemory {
  const wasm = (db as unknown as { mod?: { HEAPU8?: Uint8Array } }).mod?.HEAPU8?.buffer.byteLength ?? 0;
  const { heapUsed, heapTotal, external } = process.memoryUsage();
  return { heapUsed, heapTotal, external: Math.max(0, external - wasm), wasm };
}

async function handle(
  db: PGlite,
  execute: ReturnType<typeof namedStatements>,
  request: ThreadRequest,
): Promise<unknown> {
  switch (request.op) {
    case 'query': {
      const params = withText(request.params, request.utf8);
      const result = await sessionOf(db, request.tx).query(request.sql, params, {
        rowMode: request.rowMode,
        parsers: keepRaw(request.rawTypes),
      });
      return { rows: result.rows, fields: result.fields, affectedRows: result.affectedRows };
    }
    case 'execute': {
      const result = await execute(request.name, request.sql, withText(request.params, request.utf8));
      return { rows: result.rows };
    }
    case 'exec':
      await sessionOf(db, request.tx).exec(request.sql);
      return null;
    case 'begin': {
      const id = nextTransaction++;
      return new Promise((started, failed) => {
        const done = db.transaction(
          (tx) =>
            new Promise<void>((resolve, reject) => {
              transactions.set(id, { tx, end: { resolve, reject }, done });
              started(id);
            }),
        );
        done.catch(failed).finally(() => transactions.delete(id));
      });
    }
    case 'rollback':
      await transactions.get(request.tx)!.tx.rollback();
      return null;
    case 'end': {
      const open = transactions.get(request.tx)!;
      // resolving commits (unless rolled back already); rejecting rolls back
      if (request.commit) open.end.resolve();
      else open.end.reject(new Error('rolled back by the caller'));
      await open.done.catch((error: unknown) => {
        if (request.commit) throw error;
      });
      return null;
    }
    case 'close':
      await db.close();
      return null;
    case 'memory':
      return memory(db);
  }
}

// the cluster exists (createCluster): this thread never runs initdb
const opening = openDurablePGlite(pgdata, { create: false }).then((db) => ({ db, execute: namedStatements(db) }));
// The port listens from the start, which keeps this thread's event loop alive while PGlite opens. A loop with
// nothing to wait for makes node wait for all of V8's background work before it goes on, the optimising of
// PostgreSQL's hot WebAssembly among it: up to a tenth of a second between "ready" and the first statement.
// The opener sends nothing before "ready"; a request that came earlier would wait for the open all the same.
port.on('message', (request: ThreadRequest) => {
  opening
    .then(({ db, execute }) => handle(db, execute, request))
    .then(
      (result) => port.postMessage({ id: request.id, result } satisfies ThreadReply),
      (error: unknown) => port.postMessage({ id: request.id, error: describeError(error) } satisfies ThreadReply),
    );
});
opening.then(
  () => port.postMessage({ id: 0, result: 'ready' } satisfies ThreadReply),
  (error: unknown) => port.postMessage({ id: 0, error: describeError(error) } satisfies ThreadReply),
);

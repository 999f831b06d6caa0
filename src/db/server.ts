// A PostgreSQL server reached through a pg connection pool (DATABASE_URL).
import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import { binaryCopyRows } from './binary-copy.ts';
import { isStatementTimeout, ReadBudgetError } from './read-budget.ts';
import {
  NAMED_STATEMENT_SETTINGS,
  Utf8Text,
  type QueryOptions,
  type SqlQueryable,
  type SqlReader,
  type SqlRunner,
} from './sql.ts';

/** a Buffer parameter travels in binary format, which for a text parameter is its UTF-8 bytes */
const wireValues = (params: unknown[] | undefined) =>
  params?.map((value) => (value instanceof Utf8Text ? value.bytes : value));

export interface ServerPoolOptions {
  max?: number;
  /** the server's statement_timeout on the pool's connections (default 5 s) */
  statementTimeoutMs?: number;
  /** server settings for the pool's sessions, given when each connection starts */
  settings?: Record<string, string | number>;
  onError?: (error: Error) => void;
}

/** the loader's and the control plane's statements: long enough for any of them, short enough to free a stalled pool */
const STATEMENT_TIMEOUT_MS = 5_000;
/** the client's own limit beyond the server's: a server that stopped answering at all */
const QUERY_TIMEOUT_MARGIN_MS = 1_000;

/**
 * A named statement runs with NAMED_STATEMENT_SETTINGS, its generic plan made once per connection (node-postgres
 * prepares the statement on each connection the first time it runs there).
 */
async function named(client: pg.PoolClient, name: string, text: string, values: unknown[] | undefined) {
  await client.query(NAMED_STATEMENT_SETTINGS);
  return client.query({ name, text, values });
}

/** rolls a failed transaction back; the error when even that fails, so the pool drops the connection on release */
const rollBack = (client: pg.PoolClient): Promise<Error | undefined> =>
  client.query('ROLLBACK').then(
    () => undefined,
    (error: Error) => error,
  );

function queryable(client: pg.Pool | pg.PoolClient, inTransaction = false): SqlQueryable {
  return {
    async query<Row>(text: string, params?: unknown[], options?: QueryOptions) {
      const values = wireValues(params);
      if (!options?.name) return (await client.query(text, values)).rows as Row[];
      if (inTransaction) return (await named(client as pg.PoolClient, options.name, text, values)).rows as Row[];
      const connection = await (client as pg.Pool).connect();
      try {
        await connection.query('BEGIN');
        const result = await named(connection, options.name, text, values);
        await connection.query('COMMIT');
        connection.release();
        return result.rows as Row[];
      } catch (error) {
        connection.release(await rollBack(connection));
        throw error;
      }
    },
    async exec(script: string) {
      await client.query(script);
    },
  };
}

/**
 * A pool whose every wait is bounded: a stalled or unreachable server turns into errors within seconds
 * (requests then get "Failed to record") instead of requests hanging.
 */
export function serverPool(databaseUrl: string, options: ServerPoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: options.max ?? 8,
    connectionTimeoutMillis: 3_000,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS,
    query_timeout: (options.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS) + QUERY_TIMEOUT_MARGIN_MS,
    ...(options.settings && {
      options: Object.entries(options.settings)
        .map(([name, value]) => `-c ${name}=${value}`)
        .join(' '),
    }),
  });
  // an idle client losing its connection must not crash the process; the next query reconnects
  pool.on('error', (error) => options.onError?.(error));
  // nor may a checked-out one between two of its queries (a transaction's, ours or Prisma's), when the pool does not
  // listen to it: the server stopping then emits an 'error' nobody handles; its next query fails instead, and the
  // pool drops the broken client when it is released
  pool.on('connect', (client) => client.on('error', (error) => options.onError?.(error)));
  return pool;
}

export function openServerDatabase(databaseUrl: string, options: ServerPoolOptions = {}): SqlRunner {
  const pool = serverPool(databaseUrl, options);
  return {
    kind: 'server',
    ...queryable(pool),
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn(queryable(client, true));
        await client.query('COMMIT');
        client.release();
        return result;
      } catch (error) {
        client.release(await rollBack(client));
        throw error;
      }
    },
    async maintain(statements, maxMs) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query(`SET statement_timeout = ${Math.ceil(maxMs)}`);
        for (const text of statements) {
          // the pool's client-side bound as well (pg reads query_timeout from a query's config; its types omit it)
          const unbounded: pg.QueryConfig & { query_timeout: number } = { text, query_timeout: maxMs + 1_000 };
          await client.query(unbounded);
        }
        await client.query('RESET statement_timeout');
      } catch (error) {
        // the session's timeout may still be lifted: the connection is not handed to anyone else
        broken = error as Error;
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async copyBinary(select, columns, texts = []) {
      const inline = select.replace(/\$(\d+)\b/g, (_, place: string) => pg.escapeLiteral(texts[Number(place) - 1]!));
      const client = await pool.connect();
      try {
        const chunks: Buffer[] = [];
        for await (const chunk of client.query(copyTo(`COPY (${inline}) TO STDOUT WITH (FORMAT binary)`)))
          chunks.push(chunk as Buffer);
        client.release();
        return binaryCopyRows(Buffer.concat(chunks), columns);
      } catch (error) {
        // a COPY cut off mid-way leaves the connection in no known state
        client.release(error as Error);
        throw error;
      }
    },
    close: () => pool.end(),
  };
}

/**
 * Reads on a pool of their own whose statement_timeout is the read budget: a slow read is cancelled by the server
 * and answered as a ReadBudgetError, while the loader's and the control plane's statements keep their own pools and
 * limit. At most queueLimit reads wait for a connection (one more is refused at once), and a caller has its answer
 * within the budget however long it waited.
 */
/**
 * The read pool's sessions: a read takes one server core, never more. A filtered card scans the period's events, and
 * left to choose, PostgreSQL runs such a scan with parallel workers, a process per core: on a small machine that the
 * server shares with the service, a read then holds every core and ingestion waits for one.
 */
export const READ_SESSION_SETTINGS = { max_parallel_workers_per_gather: 0 } as const;

export function openServerReads(
  databaseUrl: string,
  { budgetMs, queueLimit, connections }: { budgetMs: number; queueLimit: number; connections: number },
  options: Omit<ServerPoolOptions, 'statementTimeoutMs'> = {},
): SqlReader & { close(): Promise<void> } {
  const runner = openServerDatabase(databaseUrl, {
    // the loader and the control plane keep pools of their own
    max: connections,
    ...options,
    statementTimeoutMs: budgetMs,
    settings: READ_SESSION_SETTINGS,
  });
  // reads hold one of `connections` slots until their statement ends (the server's statement_timeout ends it
  // within the budget), so one whose caller was answered meanwhile still counts; one whose caller was answered
  // while it waited for a slot never runs
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    running--;
    waiting.shift()?.();
  };
  /** true once a slot is held; false when the wait outlasted waitMs */
  const slot = (waitMs: number): Promise<boolean> =>
    new Promise((resolve) => {
      if (running < connections) {
        running++;
        return resolve(true);
      }
      const take = () => {
        clearTimeout(timer);
        running++;
        resolve(true);
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(take), 1);
        resolve(false);
      }, waitMs);
      waiting.push(take);
    });
  const withinBudget = async <T>(read: () => Promise<T>): Promise<T> => {
    if (running + waiting.length >= connections + queueLimit) throw new ReadBudgetError(budgetMs, 'busy');
    const started = performance.now();
    if (!(await slot(budgetMs))) throw new ReadBudgetError(budgetMs, 'slow');
    let deadline: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        read().finally(release),
        new Promise<never>((_, reject) => {
          const left = Math.max(0, budgetMs - (performance.now() - started));
          deadline = setTimeout(() => reject(new ReadBudgetError(budgetMs, 'slow')), left);
        }),
      ]);
    } catch (error) {
      // 57014: the server cancelled it; "Query read timeout": the client gave up on a server that did not
      if (isStatementTimeout(error) || /query read timeout/i.test((error as Error).message ?? ''))
        throw new ReadBudgetError(budgetMs, 'slow');
      throw error;
    } finally {
      clearTimeout(deadline);
    }
  };
  return {
    kind: 'server',
    query: (text, params, queryOptions) => withinBudget(() => runner.query(text, params, queryOptions)),
    copyBinary: (select, columns, texts) => withinBudget(() => runner.copyBinary!(select, columns, texts)),
    close: () => runner.close(),
  };
}

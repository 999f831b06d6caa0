// Messages between the main thread and the embedded PGlite's thread (src/db/embedded/pglite-thread-worker.ts).

/** utf8: the positions of parameters sent as UTF-8 bytes (Utf8Text), made strings on PGlite's thread */
export type ThreadRequest = { id: number } & (
  | {
      op: 'query';
      sql: string;
      params?: unknown[];
      utf8: number[];
      rowMode?: 'array' | 'object';
      rawTypes: number[];
      tx?: number;
    }
  | { op: 'execute'; name: string; sql: string; params: unknown[]; utf8: number[] }
  | { op: 'exec'; sql: string; tx?: number }
  | { op: 'begin' }
  | { op: 'rollback'; tx: number }
  | { op: 'end'; tx: number; commit: boolean }
  | { op: 'close' }
  | { op: 'memory' }
);

/** a request as its sender makes it: the thread's handle numbers it */
export type ThreadCall = ThreadRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** an error as it crosses the thread boundary: its message and the DatabaseError fields callers read */
export interface ThreadError {
  message: string;
  /** whether it was PGlite's DatabaseError (the Prisma adapter maps only those to Prisma's errors) */
  database: boolean;
  fields: Record<string, string>;
}

/** id 0 is the thread's start: result 'ready', or the error that stopped it */
export type ThreadReply = { id: number; result?: unknown; error?: ThreadError };

export interface ThreadQueryResult {
  rows: unknown[];
  fields: { name: string; dataTypeID: number }[];
  affectedRows?: number;
}

// The SQL runner used by the event plane and migrations: one small interface over PGlite and a pg pool.

/** an int[] parameter as PostgreSQL's array text ('{1,2,3}'): the same on PGlite and a server */
export function intArrayLiteral(values: Iterable<number>): string {
  return `{${[...values].join(',')}}`;
}

/**
 * A text parameter given as its UTF-8 bytes (the event batch, megabytes of JSON): the runner hands the bytes on
 * without ever making a JavaScript string of them on this thread (pg sends them as the parameter's binary form,
 * which for text is the bytes themselves; PGlite's thread decodes them). The statement types it: $1::text.
 */
export class Utf8Text {
  constructor(readonly bytes: Buffer) {}
}

export interface QueryOptions {
  /**
   * A statement run again and again (the event insert): prepared under this name once per connection and
   * then executed, so it is not planned at every call. The text must give each parameter's type ($1::jsonb).
   */
  name?: string;
}

export interface SqlQueryable {
  /** one statement with $n parameters; returns the rows */
  query<Row = Record<string, unknown>>(text: string, params?: unknown[], options?: QueryOptions): Promise<Row[]>;
  /** a script of several statements, no parameters (simple protocol) */
  exec(script: string): Promise<void>;
}

export interface SqlRunner extends SqlQueryable {
  readonly kind: 'embedded' | 'server';
  /** runs fn on one connection between BEGIN and COMMIT; ROLLBACK when fn throws */
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

// The SQL runner used by the event plane and migrations: one small interface over PGlite and a pg pool.

/** an int[] parameter as PostgreSQL's array text ('{1,2,3}'): the same on PGlite and a server */
export function intArrayLiteral(values: Iterable<number>): string {
  return `{${[...values].join(',')}}`;
}

/**
 * A text parameter given as its UTF-8 bytes (the event batch, megabytes of JSON): the runner hands the bytes on
 * without ever making a JavaScript string of them on this thread (pg sends them as the parameter's binary form,
 * which for text is the bytes themselves; PGlite's thread decodes them). The statement types it: {{rows}}::text.
 */
export class Utf8Text {
  constructor(readonly bytes: Buffer) {}
}

/**
 * What a named statement runs with, for its transaction alone (both engines):
 * - its generic plan, made once: left to choose, PostgreSQL may plan a large statement anew at every execution when
 *   its estimates favour the parameters' values;
 * - no sequential scan where an index serves: the plan is kept while tables grow, and for a table of a page or two
 *   (an app's young custom event catalog, say) the planner prefers reading all of it to one index probe, which in a
 *   statement probing once per entry of the batch means reading the whole table hundreds of times.
 */
export const NAMED_STATEMENT_SETTINGS =
  "SELECT set_config('plan_cache_mode', 'force_generic_plan', true), set_config('enable_seqscan', 'off', true)";

export interface QueryOptions {
  /**
   * A statement run again and again (the event insert): prepared under this name once per connection and
   * then executed, so it is not planned at every call. The text must give each parameter's type ({{batch}}::jsonb).
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
  /**
   * The rows of a SELECT, each column as its bytes (text as UTF-8) under the name `columns` gives it in the select's
   * order, by a binary COPY: where a query's rows would carry a bytea column as hex text, twice its size, made a
   * string and parsed here. A COPY takes no parameters: the select's `$1`, `$2`… are `texts`, written in as literals
   * by the driver's own quoting. Only a server has it; PGlite hands bytea over as bytes.
   */
  copyBinary?<Column extends string>(
    select: string,
    columns: readonly Column[],
    texts?: readonly string[],
  ): Promise<Record<Column, Buffer | null>[]>;
  /**
   * Maintenance statements (a VACUUM FULL) one after another on one connection, outside any transaction and without
   * the reads' time limit, up to maxMs in all. Only a server has it: the embedded engine runs every statement to its
   * end anyway.
   */
  maintain?(statements: string[], maxMs: number): Promise<void>;
  /** runs fn on one connection between BEGIN and COMMIT; ROLLBACK when fn throws */
  transaction<T>(fn: (tx: SqlQueryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * What a read needs of a runner (dashboards, insights, the read API, alerts, ranking): statements that change
 * nothing, each within the store's read budget (ReadBudgetError past it).
 */
export type SqlReader = Pick<SqlRunner, 'kind' | 'query' | 'copyBinary'>;

// Named statements on PGlite, run on its own thread: PREPARE once, then EXECUTE with the parameters as constants
// (PGlite's query() parses and plans every statement anew and has no named ones).
import type { PGlite } from '@electric-sql/pglite';
import { NAMED_STATEMENT_SETTINGS } from '../sql.ts';

/** SQLSTATE: no prepared statement of that name (26000); one already exists (42P05) */
const NO_SUCH_STATEMENT = '26000';
const STATEMENT_EXISTS = '42P05';

/**
 * A constant PostgreSQL reads back exactly: E'' with every backslash and quote doubled (so it does not
 * depend on standard_conforming_strings), or NULL.
 */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  // bytes (a bytea parameter) in bytea's hex form
  if (value instanceof Uint8Array)
    return `E'\\\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}'`;
  const text =
    typeof value === 'string'
      ? value
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : undefined;
  if (text === undefined)
    throw new TypeError(`a named statement on PGlite takes text, numbers, booleans or bytes, not ${typeof value}`);
  return `E'${text.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/**
 * Planning the event insert costs PGlite more CPU than inserting a small batch with it, so it is prepared once
 * per session. Returns the function that runs a named statement.
 */
export function namedStatements(db: Pick<PGlite, 'query' | 'transaction'>) {
  const prepared = new Map<string, Promise<void>>();
  const prepare = (name: string, text: string) => {
    let done = prepared.get(name);
    if (!done) {
      done = db.query(`PREPARE ${name} AS ${text}`).then(
        () => undefined,
        (error: { code?: string }) => {
          if (error.code === STATEMENT_EXISTS) return;
          prepared.delete(name);
          throw error;
        },
      );
      prepared.set(name, done);
    }
    return done;
  };
  return async function execute<Row>(name: string, text: string, params: unknown[] = []): Promise<{ rows: Row[] }> {
    for (let attempt = 0; ; attempt++) {
      await prepare(name, text);
      try {
        return await db.transaction(async (tx) => {
          await tx.query(NAMED_STATEMENT_SETTINGS);
          return tx.query<Row>(`EXECUTE ${name}(${params.map(literal).join(', ')})`);
        });
      } catch (error) {
        // the session lost it (DISCARD ALL): prepare again, once
        if ((error as { code?: string }).code !== NO_SUCH_STATEMENT || attempt > 0) throw error;
        prepared.delete(name);
      }
    }
  };
}

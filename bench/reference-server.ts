// The store reference of the ingest bench: what the stores themselves take, on the service's own store runners
// (PGlite in DATA_DIR, or PostgreSQL at DATABASE_URL), group-committed, each 201 after its commit. No validation,
// token, pseudonymisation or rollups. REFERENCE=requests stores each raw body as one row; REFERENCE=events decodes
// the body and stores one row per event in a table keyed and indexed like `events`; REFERENCE=copy does the same
// on PostgreSQL through COPY into a temporary table, then INSERT ... SELECT ... ON CONFLICT DO NOTHING (COPY alone
// cannot skip a retried event). What it reaches bounds the rate any implementation keeps loaded into the same store
// on this machine.
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import Fastify from 'fastify';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { openEmbeddedDatabase } from '../src/db/embedded/index.ts';
import { openServerDatabase } from '../src/db/server.ts';
import type { SqlRunner } from '../src/db/sql.ts';
import { Pseudonymiser } from '../src/events/request/pseudonym.ts';
import { commitConcurrency, GroupCommitWriter, type BatchStore } from './lib/group-commit.ts';
import { Secrets } from '../src/tokens/secret.ts';

const mode =
  process.env.REFERENCE === 'events' || process.env.REFERENCE === 'copy' ? process.env.REFERENCE : 'requests';
const sql: SqlRunner = process.env.DATABASE_URL
  ? openServerDatabase(process.env.DATABASE_URL)
  : (await openEmbeddedDatabase(process.env.DATA_DIR ?? './data')).sql;

await sql.exec(`
  CREATE TABLE IF NOT EXISTS reference_requests (body bytea NOT NULL);
  CREATE TABLE IF NOT EXISTS reference_events (
    app_id int NOT NULL, event_key bytea NOT NULL, received_at timestamptz(3) NOT NULL, props jsonb NOT NULL,
    PRIMARY KEY (app_id, event_key));
  CREATE INDEX IF NOT EXISTS reference_events_received ON reference_events (app_id, received_at);`);

/** an event row by position, as the service sends its rows: event key (base64), received time (epoch ms), the event */
type EventRow = [key: string, at: number, event: unknown];

const stores = {
  requests: {
    async insert(bodies: Buffer[]) {
      await sql.query(
        `INSERT INTO reference_requests (body) SELECT decode(b, 'base64') FROM jsonb_array_elements_text($1::jsonb) AS b`,
        [JSON.stringify(bodies.map((body) => body.toString('base64')))],
        { name: 'reference_requests' },
      );
      return bodies.length;
    },
  } satisfies BatchStore<Buffer>,
  events: {
    async insert(rows: EventRow[]) {
      await sql.query(
        `INSERT INTO reference_events (app_id, event_key, received_at, props)
         SELECT 1, decode(r->>0, 'base64'), to_timestamp((r->>1)::float8 / 1000), r->2 FROM jsonb_array_elements($1::jsonb) AS r
         ON CONFLICT DO NOTHING`,
        [JSON.stringify(rows)],
        { name: 'reference_events' },
      );
      return rows.length;
    },
  } satisfies BatchStore<EventRow>,
  copy: {
    async insert(rows: EventRow[]) {
      const client = await copyPool!.connect();
      try {
        await client.query('BEGIN');
        await client.query(
          `CREATE TEMP TABLE IF NOT EXISTS staging (event_key bytea, received_at timestamptz(3), props jsonb) ON COMMIT DELETE ROWS`,
        );
        // CSV: a field in quotes, its quotes doubled
        let text = '';
        for (const [key, at, event] of rows) {
          text += `\\x${Buffer.from(key, 'base64').toString('hex')},${new Date(at).toISOString()},"${JSON.stringify(event).replace(/"/g, '""')}"\n`;
        }
        await pipeline(
          Readable.from([Buffer.from(text)]),
          client.query(copyFrom(`COPY staging FROM STDIN (FORMAT csv)`)),
        );
        await client.query(
          `INSERT INTO reference_events (app_id, event_key, received_at, props) SELECT 1, event_key, received_at, props FROM staging ON CONFLICT DO NOTHING`,
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
      return rows.length;
    },
  } satisfies BatchStore<EventRow>,
};
const concurrency = commitConcurrency(sql.kind);
const requestWriter = new GroupCommitWriter(stores.requests, { concurrency });
const copyPool = mode === 'copy' ? new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 8 }) : undefined;
const eventWriter = new GroupCommitWriter(mode === 'copy' ? stores.copy : stores.events, { concurrency });
/** event keys made as the service makes them */
const pseudonymiser = new Pseudonymiser(new Secrets(Buffer.from('reference-server-secret')));

function eventRows(body: Buffer, encoding: string | undefined): EventRow[] {
  const text = (encoding === 'gzip' ? zlib.gunzipSync(body) : body).toString('utf8');
  const parsed = JSON.parse(text) as unknown;
  const now = Date.now();
  return (Array.isArray(parsed) ? parsed : [parsed]).map(
    (event): EventRow => [pseudonymiser.eventKey(1, JSON.stringify(event), now, now).toString('base64'), now, event],
  );
}

const app = Fastify({ logger: false, bodyLimit: 1_048_576 });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.post('/events', async (request, reply) => {
  const body = request.body as Buffer;
  // the body's size stands for its events' (the service weighs a commit by its events' JSON)
  if (mode === 'requests') await requestWriter.submit([body], body.length);
  else await eventWriter.submit(eventRows(body, request.headers['content-encoding']), body.length);
  reply.code(201);
  return { message: 'Success record.' };
});
app.get('/healthz', async () => ({ status: 'ok' }));

await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
const stop = () =>
  void app
    .close()
    .then(() => Promise.all([requestWriter.drained(), eventWriter.drained()]))
    .then(() => sql.close())
    .then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

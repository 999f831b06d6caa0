// The log references of the ingest bench: the baseline's bare Fastify handler plus the service's durable append
// (src/log, opened as the service opens it), one record per request body, answered 201 once the record is on disk.
// No validation, token or pseudonymisation.
//   LOG_REFERENCE=log-only (default): what was appended is released every 100 ms as if stored: what the service
//     could reach if everything but the durable append were free.
//   LOG_REFERENCE=log-and-store: a loader as the service's (a commit at most every 100 ms, at most 1000 records)
//     stores each body as one row in PGlite in DATA_DIR, on the service's store thread, and releases what it stored:
//     the least any implementation does that acknowledges from a durable log and keeps every event in the embedded
//     store, without the service's rows, rollups or checks.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Fastify from 'fastify';
import { openEmbeddedDatabase } from '../src/db/embedded/index.ts';
import { DurableLog } from '../src/log/durable-log.ts';

const dataDir = process.env.DATA_DIR ?? './data';
const withStore = process.env.LOG_REFERENCE === 'log-and-store';
const log = await DurableLog.open(path.join(dataDir, 'log'));
const store = withStore ? (await openEmbeddedDatabase(dataDir)).sql : undefined;
await store?.exec('CREATE TABLE IF NOT EXISTS reference_requests (body bytea NOT NULL)');

let stopping = false;
const COMMIT_INTERVAL_MS = 100;

/** log-only: released as if stored */
async function release(): Promise<void> {
  while (!stopping) {
    await log.release(log.stats().lastSeq);
    await sleep(COMMIT_INTERVAL_MS);
  }
}

/** log-and-store: each run of the log stored as rows, then released */
async function load(): Promise<void> {
  let through = 0;
  while (!stopping) {
    const began = Date.now();
    const records = log.read(through, { maxRecords: 1000 });
    if (records.length > 0) {
      await store!.query(
        `INSERT INTO reference_requests (body) SELECT decode(b, 'base64') FROM jsonb_array_elements_text($1::jsonb) AS b`,
        [JSON.stringify(records.map((record) => record.value.toString('base64')))],
        { name: 'reference_requests' },
      );
      through = records.at(-1)!.seq;
      await log.release(through);
    }
    await sleep(Math.max(0, COMMIT_INTERVAL_MS - (Date.now() - began)));
  }
}
const background = withStore ? load() : release();

const app = Fastify({ logger: false, bodyLimit: 1_048_576 });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.post('/events', async (request, reply) => {
  await log.append(request.body as Buffer);
  reply.code(201);
  return { message: 'Success record.' };
});
app.get('/healthz', async () => ({ status: 'ok' }));
// what waits in the log: the bench reads it to see whether the store kept up
app.get('/backlog', async () => ({ records: log.stats().records }));

await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
const stop = () => {
  stopping = true;
  void app
    .close()
    .then(() => background)
    .then(() => log.close())
    .then(() => store?.close())
    .then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

// The log-only reference of the ingest bench: the baseline's bare Fastify handler plus the service's durable
// append (src/log, opened as the service opens it), one record per request body, answered 201 once the record is
// on disk; what was appended is released every 100 ms as the loader would. No validation, token, store or loader:
// what the service could reach if everything but the durable append were free.
import path from 'node:path';
import Fastify from 'fastify';
import { DurableLog } from '../src/log/durable-log.ts';

const log = await DurableLog.open(path.join(process.env.DATA_DIR ?? './data', 'log'));
const releaser = setInterval(() => void log.release(log.stats().lastSeq), 100);

const app = Fastify({ logger: false, bodyLimit: 1_048_576 });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.post('/events', async (request, reply) => {
  await log.append(request.body as Buffer);
  reply.code(201);
  return { message: 'Success record.' };
});
app.get('/healthz', async () => ({ status: 'ok' }));

await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
const stop = () => {
  clearInterval(releaser);
  void app
    .close()
    .then(() => log.close())
    .then(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

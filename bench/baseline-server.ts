// The baseline of the ingest bench: a bare Fastify server whose POST /events reads the body and answers
// 201 with the service's success body. No decoding, validation, auth, CORS, rate limit or store.
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 1_048_576 });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
app.post('/events', async (_request, reply) => {
  reply.code(201);
  return { message: 'Success record.' };
});
app.get('/healthz', async () => ({ status: 'ok' }));

await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
const stop = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

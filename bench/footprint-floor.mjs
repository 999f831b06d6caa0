// The footprint bench's references, in plain JavaScript so no TypeScript loader is counted: an HTTP server answering
// GET /healthz (node:http, or Fastify with HTTP=fastify), with one PGlite thread open on DATA_DIR/pgdata when
// PGLITE_START_PARAMS (a JSON list, the service's) is given: the least any service on this design holds; with
// LOAD_MODULES (a comma-separated list of packages or project files), those loaded too: the floor of a stack.
//   PORT=… [HTTP=fastify] [DATA_DIR=… PGLITE_START_PARAMS='[…]'] [LOAD_MODULES=…] node bench/footprint-floor.mjs
import http from 'node:http';
import path from 'node:path';
import { Worker } from 'node:worker_threads';

const THREAD = `
const { parentPort, workerData } = await import('node:worker_threads');
const { PGlite } = await import('@electric-sql/pglite');
const { NodeFS } = await import('@electric-sql/pglite/nodefs');
const db = await PGlite.create({ fs: new NodeFS(workerData.pgdata), startParams: workerData.startParams });
await db.query('SELECT 1');
parentPort.on('message', () => db.close().then(() => parentPort.postMessage('closed')));
parentPort.postMessage('ready');
`;

let thread;
if (process.env.PGLITE_START_PARAMS) {
  const pgdata = path.join(process.env.DATA_DIR ?? './data', 'pgdata');
  thread = new Worker(THREAD, {
    eval: true,
    workerData: { pgdata, startParams: JSON.parse(process.env.PGLITE_START_PARAMS) },
  });
  await new Promise((resolve, reject) => {
    thread.once('message', resolve);
    thread.once('error', reject);
  });
}

for (const specifier of process.env.LOAD_MODULES?.split(',').filter(Boolean) ?? []) {
  await import(specifier.startsWith('.') ? path.resolve(specifier) : specifier);
}

const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';
let close;
if (process.env.HTTP === 'fastify') {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  app.get('/healthz', async () => ({ status: 'ok' }));
  await app.listen({ port, host });
  close = () => app.close();
} else {
  const server = http.createServer((request, response) => {
    response.writeHead(request.url === '/healthz' ? 200 : 404, { 'content-type': 'application/json' });
    response.end('{"status":"ok"}');
  });
  await new Promise((resolve) => server.listen(port, host, resolve));
  close = () => new Promise((resolve) => server.close(resolve));
}

const stop = async () => {
  await close();
  if (thread) {
    thread.postMessage('close');
    await new Promise((resolve) => thread.once('message', resolve));
  }
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

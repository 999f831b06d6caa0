// The record-only reference of the ingest bench: the baseline's bare Fastify handler doing the service's record step
// and nothing before it. Each body is taken as one valid event of one app; its row is made as the service makes it
// (normalised, its user pseudonymised and its identity keyed), appended to the service's ingest log and stored by the
// service's loader with the event insert and its rollups, on the embedded store in DATA_DIR as the service opens it,
// the service's table maintenance beside it. No token, origin, validation, rate limit, quota, CORS or the service's
// hooks: what any implementation keeping the service's rows and rollups reaches on this machine.
//   DATA_DIR=… SECRET=… node --import tsx bench/record-reference-server.ts
import Fastify from 'fastify';
import { openStore } from '../src/db/store.ts';
import { TableMaintenance } from '../src/db/table-maintenance.ts';
import { Pseudonymiser } from '../src/events/request/pseudonym.ts';
import { eventRows } from '../src/events/request/rows.ts';
import type { RawEvent } from '../src/events/request/validate.ts';
import { IngestLog } from '../src/events/write/ingest-log.ts';
import { SqlEventPlane } from '../src/events/write/event-plane.ts';
import { loadSecrets } from '../src/tokens/secret.ts';
import { LOADER_PACE } from '../src/services.ts';

const dataDir = process.env.DATA_DIR ?? './data';
const store = await openStore({ dataDir });
const [app] = await store.sql.query<{ id: number }>(
  `INSERT INTO apps (app_name, bot, domains, updated_at) VALUES ('bench_app', '@bench_app_bot', '{}', now())
   ON CONFLICT (app_name) DO UPDATE SET updated_at = now() RETURNING id`,
);
const appId = app!.id;
const pseudonymiser = new Pseudonymiser(await loadSecrets({ secret: process.env.SECRET, dataDir }, store.sql));
const maintenance = new TableMaintenance(store.sql, { onError: (error, what) => console.error(what, error) });
const ingestLog = await IngestLog.open(dataDir, new SqlEventPlane(store.sql), {
  maxBytes: 1024 ** 3,
  minFreeBytes: 0,
  ...LOADER_PACE,
  onError: (error, what) => console.error(what, error),
  onCommit: () => maintenance.changed(),
});
maintenance.start();

const server = Fastify({ logger: false, bodyLimit: 1_048_576 });
server.post('/events', async (request, reply) => {
  const { rows, bytes } = eventRows(appId, [request.body as RawEvent], new Date(), pseudonymiser);
  await ingestLog.append(rows, bytes);
  reply.code(201);
  return { message: 'Success record.' };
});
server.get('/healthz', async () => ({ status: 'ok' }));
// what waits in the log: the bench reads it to see whether the store kept up
server.get('/backlog', async () => ({ records: ingestLog.stats().records }));

await server.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
const stop = () =>
  void server
    .close()
    .then(() => ingestLog.close())
    .then(() => maintenance.stop())
    .then(() => store.close())
    .then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

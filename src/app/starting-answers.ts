// A small process of its own that listens for the service while it starts and answers "starting": the service's
// main thread evaluates its modules and compiles Prisma's engine in pieces no answer can interrupt, this process
// does nothing else. It gives the listening socket to the service when the app is ready (src/app/starting.ts).
//
//   node dist/server/starting-answers.js '{"port":8080,"host":"0.0.0.0","store":"embedded"}'   (forked, with IPC)
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { REFUSALS } from '../events/request/refusals.ts';
import { entryFile } from '../platform/project-paths.ts';

/** what the starting service answers a request for events: the spec's refusal for a server problem */
const NOT_RECORDED = { message: REFUSALS.failedToRecord.message };
const STARTING_MESSAGE = 'The service is starting: it opens its store. Try again in a moment.';

export interface StartingSettings {
  port: number;
  host: string;
  store: 'embedded' | 'server';
}

/** what this process tells the service */
export type StartingReport =
  | { listening: number }
  | { failed: { message: string; code?: string } }
  /** sent with the listening socket */
  | { socket: true };

/** how long connections accepted before the hand-over may take to send their request */
const STRAGGLER_WAIT_MS = 5_000;

/** what the service tells this process: the app is ready, give it the socket */
export const HAND_OVER = 'hand-over';

function answerStarting(
  store: StartingSettings['store'],
  request: http.IncomingMessage,
  response: http.ServerResponse,
) {
  const path = request.url?.split('?')[0];
  const [status, body] =
    path === '/healthz'
      ? [503, { status: 'starting', reason: STARTING_MESSAGE, store }]
      : request.method === 'POST' && path === '/events'
        ? [400, NOT_RECORDED]
        : [503, { message: STARTING_MESSAGE }];
  // the body is not read: the connection closes after the answer, so nothing of it is taken for the next request
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'retry-after': '1',
    connection: 'close',
  });
  response.end(JSON.stringify(body));
}

function report(message: StartingReport, socket?: http.Server, sent?: () => void): void {
  process.send?.(message, socket, {}, () => sent?.());
}

function answerWhileStarting(settings: StartingSettings): void {
  const server = http.createServer((request, response) => answerStarting(settings.store, request, response));
  server.once('error', (error: NodeJS.ErrnoException) => {
    report({ failed: { message: error.message, code: error.code } }, undefined, () => process.exit(1));
  });
  server.listen({ port: settings.port, host: settings.host }, () => {
    report({ listening: (server.address() as AddressInfo).port });
  });
  process.on('message', (message) => {
    if (message !== HAND_OVER) return;
    // once the socket is on its way, this process stops accepting; every answer closes its connection, so the ones
    // accepted meanwhile end with their answer (a connection whose request has not arrived yet is not cut), then it
    // exits; a client that never sends its request is not waited for long
    report({ socket: true }, server, () => {
      server.close(() => process.exit(0));
      setTimeout(() => {
        server.closeAllConnections();
        process.exit(0);
      }, STRAGGLER_WAIT_MS).unref();
    });
  });
  // the service is gone (killed, or it failed to start): nothing to answer for
  process.on('disconnect', () => process.exit(0));
}

if (process.argv[1] === entryFile('starting-answers', import.meta.url)) {
  answerWhileStarting(JSON.parse(process.argv[2] ?? '{}') as StartingSettings);
}

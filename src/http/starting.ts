// The service's listening socket, open before the store: while the store opens and migrations apply, /healthz answers
// 503 "starting" (a supervisor sees the process alive, and keeps it out of rotation), then the app takes it over.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyServerFactory } from 'fastify';
import { REFUSALS } from '../events/request/refusals.ts';

/** what the starting service answers a request for events: the spec's refusal for a server problem */
const NOT_RECORDED = { message: REFUSALS.failedToRecord.message };
const STARTING_MESSAGE = 'The service is starting: it opens its store. Try again in a moment.';

export interface StartingServer {
  /** the port it listens on (the one asked for, or the one given for 0) */
  port: number;
  /** gives the socket to the app built with it (Fastify's serverFactory); requests go to the app from handOver on */
  serverFactory: FastifyServerFactory;
  /** the app is ready: every request from now on is its */
  handOver(): void;
  /** stops accepting; resolves once every connection ended (the app answers "Connection: close" while it closes) */
  close(): Promise<void>;
}

function answerStarting(store: 'embedded' | 'server', request: http.IncomingMessage, response: http.ServerResponse) {
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

/** Listens on port and host now and answers "starting" until handOver. */
export async function listenWhileStarting(options: {
  port: number;
  host: string;
  store: 'embedded' | 'server';
}): Promise<StartingServer> {
  const starting = (request: http.IncomingMessage, response: http.ServerResponse) =>
    answerStarting(options.store, request, response);
  const server = http.createServer(starting);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.port, host: options.host }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  let appHandler: http.RequestListener | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    serverFactory: (handler, fastifyOptions) => {
      appHandler = handler;
      // what Fastify sets on a server it makes itself
      const timeouts = fastifyOptions as {
        keepAliveTimeout?: number;
        requestTimeout?: number;
        connectionTimeout?: number;
      };
      server.keepAliveTimeout = timeouts.keepAliveTimeout ?? 72_000;
      server.requestTimeout = timeouts.requestTimeout ?? 0;
      server.setTimeout(timeouts.connectionTimeout ?? 0);
      return server;
    },
    handOver() {
      if (!appHandler) throw new Error('no app was built on the starting server');
      server.off('request', starting);
      server.on('request', appHandler);
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (!server.listening) return resolve();
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

// The service's listening socket, open before the store: while the store opens and migrations apply, /healthz answers
// 503 "starting" (a supervisor sees the process alive, and keeps it out of rotation), then the app takes it over.
// The "starting" answers come from a small process of its own (src/app/starting-answers.ts), so they do not wait
// for the service's main thread, busy loading its code; it gives the socket to the app at hand-over.
import { type ChildProcess, fork } from 'node:child_process';
import http from 'node:http';
import type { Server as NetServer } from 'node:net';
import type { FastifyServerFactory } from 'fastify';
import { entryPoint } from '../platform/project-paths.ts';
import { HAND_OVER, type StartingReport, type StartingSettings } from './starting-answers.ts';

export interface StartingServer {
  /** the port it listens on (the one asked for, or the one given for 0) */
  port: number;
  /** makes the app's server (Fastify's serverFactory); it serves the socket from handOver on */
  serverFactory: FastifyServerFactory;
  /** the app is ready: every connection from now on is its */
  handOver(): Promise<void>;
  /** stops accepting; resolves once every connection ended (the app answers "Connection: close" while it closes) */
  close(): Promise<void>;
}

/** an error as the listening process reported it, with its code (EADDRINUSE, EACCES) */
function listenError(failed: { message: string; code?: string }): Error {
  return Object.assign(new Error(failed.message), failed.code ? { code: failed.code } : {});
}

/** the first report of child that matches, with the handle sent with it */
function reportOf<T extends StartingReport>(
  child: ChildProcess,
  matches: (report: StartingReport) => report is T,
): Promise<{ report: T; handle: unknown }> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown, handle: unknown) => {
      const report = message as StartingReport;
      if ('failed' in report) return done(() => reject(listenError(report.failed)));
      if (matches(report)) done(() => resolve({ report, handle }));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      done(() => reject(new Error(`the process answering while the service starts ended (${code ?? signal})`)));
    const done = (settle: () => void) => {
      child.off('message', onMessage);
      child.off('exit', onExit);
      settle();
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Listens on port and host now (in a process of its own) and answers "starting" until handOver. */
export async function listenWhileStarting(settings: StartingSettings): Promise<StartingServer> {
  const { file, execArgv } = entryPoint('starting-answers', import.meta.url);
  const child = fork(file, [JSON.stringify(settings)], {
    execArgv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    serialization: 'json',
  });
  const { report } = await reportOf(child, (r): r is { listening: number } => 'listening' in r);
  let appServer: http.Server | undefined;
  let handedOver = false;
  return {
    port: report.listening,
    serverFactory: (handler, fastifyOptions) => {
      appServer = http.createServer(handler);
      // what Fastify sets on a server it makes itself
      const timeouts = fastifyOptions as {
        keepAliveTimeout?: number;
        requestTimeout?: number;
        connectionTimeout?: number;
      };
      appServer.keepAliveTimeout = timeouts.keepAliveTimeout ?? 72_000;
      appServer.requestTimeout = timeouts.requestTimeout ?? 0;
      appServer.setTimeout(timeouts.connectionTimeout ?? 0);
      return appServer;
    },
    async handOver() {
      const server = appServer;
      if (!server) throw new Error('no app was built on the starting server');
      const given = reportOf(child, (r): r is { socket: true } => 'socket' in r);
      child.send(HAND_OVER);
      const { handle } = await given;
      // the socket arrives as a server listening on it; the app's server takes its handle (server.listen(handle))
      await new Promise<void>((resolve) => server.listen(handle as NetServer, resolve));
      handedOver = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (!handedOver || !appServer?.listening) {
          child.kill();
          return resolve();
        }
        appServer.close(() => resolve());
        appServer.closeIdleConnections();
      }),
  };
}

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
  /** the app is ready: every connection from now on is its (nothing, once close() was called) */
  handOver(): Promise<void>;
  /** stops accepting; resolves once every connection ended (the app answers "Connection: close" while it closes) */
  close(): Promise<void>;
}

/** an error as the listening process reported it, with its code (EADDRINUSE, EACCES) */
function listenError(failed: { message: string; code?: string }): Error {
  return Object.assign(new Error(failed.message), failed.code ? { code: failed.code } : {});
}

/** the first report of child that matches, with the handle sent with it; rejects when the child ends first */
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
    const onExit = () => done(() => reject(new Error('the process answering while the service starts ended')));
    const done = (settle: () => void) => {
      child.off('message', onMessage);
      child.off('exit', onExit);
      child.off('error', onExit);
      settle();
    };
    if (!child.connected) return onExit();
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.once('error', onExit);
  });
}

/** Listens on port and host now (in a process of its own) and answers "starting" until handOver. */
export async function listenWhileStarting(settings: StartingSettings): Promise<StartingServer> {
  const { file, execArgv } = entryPoint('starting-answers', new URL('./starting-answers.ts', import.meta.url).href);
  const child = fork(file, [JSON.stringify(settings)], {
    execArgv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    serialization: 'json',
  });
  // a failed spawn, or a send to a process gone meanwhile, is met where it matters (reportOf, handOver): never thrown
  child.on('error', () => {});
  let handingOver = false;
  let closed = false;
  const { report } = await reportOf(child, (r): r is { listening: number } => 'listening' in r);
  const port = report.listening;
  child.once('exit', (code, signal) => {
    if (!handingOver && !closed)
      console.warn(
        `the process answering "starting" ended (${code ?? signal}): the port refuses connections until the service is ready`,
      );
  });
  let appServer: http.Server | undefined;
  /** the socket from the child; when the child is gone (killed, or its server failed), the port is free to take */
  const takeSocket = async (server: http.Server) => {
    try {
      const given = reportOf(child, (r): r is { socket: true } => 'socket' in r);
      child.send(HAND_OVER);
      const { handle } = await given;
      await new Promise<void>((resolve) => server.listen(handle as NetServer, resolve));
    } catch {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ port, host: settings.host }, () => {
          server.off('error', reject);
          resolve();
        });
      });
    }
  };
  return {
    port,
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
      if (!appServer) throw new Error('no app was built on the starting server');
      if (closed) return;
      handingOver = true;
      await takeSocket(appServer);
      // stopped while the socket was on its way: the app's server does not keep it
      if (closed) appServer.close();
    },
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        if (!appServer?.listening) {
          child.kill();
          return resolve();
        }
        appServer.close(() => resolve());
        appServer.closeIdleConnections();
      }),
  };
}

// One thread of the embedded PGlite (src/db/embedded/pglite-thread-worker.ts), started and spoken to: numbered requests, their
// replies, and the signs that its engine cannot go on.
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { messages } from '@electric-sql/pglite';
import { BUILT, entryFile } from '../../platform/project-paths.ts';
import type { ThreadCall, ThreadError, ThreadReply } from './pglite-thread-protocol.ts';

/**
 * Severities after which PGlite's engine is left in a state no later statement survives: after a PANIC (a WAL
 * segment that could not be allocated on a full disk) every statement failed ("XLogBeginInsert was already called",
 * "cannot drop active portal") and some spun without end. Committed data is safe (the WAL is synced at each commit).
 */
const WEDGING_SEVERITIES = new Set(['PANIC', 'FATAL']);

/** an error as the thread sent it, as PGlite would have thrown it */
function rebuildError(error: ThreadError): Error {
  if (!error.database) return new Error(error.message);
  return Object.assign(new messages.DatabaseError(error.message, 0, 'error'), error.fields);
}

/** one PGlite thread: its statements and its end */
export interface Thread {
  call(request: ThreadCall): Promise<unknown>;
  /** ends the thread at once, whatever it runs */
  kill(): Promise<void>;
}

/** stands in for a thread that could not start: every statement fails with its error */
export function deadThread(error: Error): Thread {
  return { call: () => Promise.reject(error), kill: async () => {} };
}

/**
 * Starts a thread on pgdata, ready once PGlite opened it (within openWaitMs, else it is ended and this fails).
 * onBroken is told once when the engine cannot go on: a reply of a wedging severity (after the statement that met it
 * has its error), or the thread failing or exiting by itself (not when it is ended by kill).
 */
export async function spawnThread(
  pgdata: string,
  onBroken: (thread: Thread, reason: string) => void,
  openWaitMs?: number,
): Promise<Thread> {
  // built: the thread's own entry point, with node's default options: no stack of this thread is ever shown (its
  // errors reach this thread as messages), so nothing there reads source maps; V8's flags are the process's all the
  // same. From source, the thread loads TypeScript through tsx's API, whatever loader (or none) this thread runs under
  const worker = BUILT
    ? new Worker(entryFile('pglite-thread-worker', import.meta.url), { workerData: { pgdata }, execArgv: [] })
    : new Worker(
        `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(new URL('./pglite-thread-worker.ts', import.meta.url).href)}); })`,
        { eval: true, workerData: { pgdata } },
      );
  const pending = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let stopped: Error | undefined;
  let killed = false;
  /** set once PGlite opened: a thread that never opened is the opener's failure, not a broken engine */
  let thread: Thread | undefined;
  const ready = new Promise<void>((resolve, reject) => pending.set(0, { resolve: () => resolve(), reject }));
  worker.on('message', (reply: ThreadReply) => {
    const waiting = pending.get(reply.id);
    pending.delete(reply.id);
    if (reply.error) waiting?.reject(rebuildError(reply.error));
    else waiting?.resolve(reply.result);
    const severity = reply.error?.fields?.severity;
    if (thread && severity && WEDGING_SEVERITIES.has(severity)) onBroken(thread, reply.error!.message);
  });
  const stop = (error: Error) => {
    stopped ??= error;
    for (const waiting of pending.values()) waiting.reject(stopped);
    pending.clear();
    if (thread && !killed) onBroken(thread, error.message);
  };
  worker.on('error', (error) => stop(new Error(`the embedded database thread failed: ${error.message}`)));
  worker.on('exit', () => stop(new Error('the embedded database thread has stopped')));

  const opening =
    openWaitMs === undefined
      ? ready
      : Promise.race([
          ready,
          sleep(openWaitMs, undefined, { ref: false }).then(() => {
            throw new Error('the embedded database thread did not open in time');
          }),
        ]);
  await opening.catch(async (error: unknown) => {
    killed = true;
    await worker.terminate();
    throw error;
  });
  thread = {
    call(request) {
      if (stopped) return Promise.reject(stopped);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        try {
          worker.postMessage({ ...request, id });
        } catch (error) {
          // a parameter that cannot be copied to another thread
          pending.delete(id);
          reject(error);
        }
      });
    },
    async kill() {
      killed = true;
      await worker.terminate();
    },
  };
  return thread;
}

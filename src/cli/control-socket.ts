// The unix socket through which the operator CLI runs its commands inside the process that owns the
// embedded store (a second process must never open PGlite's data directory).
import fs from 'node:fs';
import http from 'node:http';
import type { Services } from '../services.ts';
import type { CommandResult } from './command-result.ts';

const MAX_REQUEST_BYTES = 64 * 1024;
/** the one request the CLI sends: POST /run with {"argv": [...]} */
const RUN_PATH = '/run';

/** the CLI's arguments from a request body, or null when it is not what runThroughOwner sends */
function argvOf(body: string): string[] | null {
  try {
    const argv = (JSON.parse(body) as { argv?: unknown } | null)?.argv;
    return Array.isArray(argv) && argv.every((arg) => typeof arg === 'string') ? argv : null;
  } catch {
    return null;
  }
}

function refuse(response: http.ServerResponse, status: number, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: message }));
}

export async function startControlSocket(socketPath: string, services: Services): Promise<() => Promise<void>> {
  // imported here: the CLI imports this module for runThroughOwner, which must not load the commands' modules
  const { runCommand } = await import('./commands.ts');
  fs.rmSync(socketPath, { force: true }); // left by a killed owner
  const server = http.createServer((request, response) => {
    // nothing but the CLI's own request runs a command
    if (request.url !== RUN_PATH) return refuse(response, 404, 'not found');
    if (request.method !== 'POST') return refuse(response, 405, 'only POST');
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', async () => {
      const argv = argvOf(Buffer.concat(chunks).toString('utf8'));
      if (!argv) return refuse(response, 400, 'expected {"argv": [strings]}');
      let result: CommandResult;
      try {
        result = await runCommand(services, argv);
      } catch (error) {
        result = { exitCode: 1, stdout: '', stderr: `${(error as Error).message}\n` };
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  fs.chmodSync(socketPath, 0o600);
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
      fs.rmSync(socketPath, { force: true });
    });
}

export function runThroughOwner(socketPath: string, argv: string[]): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { socketPath, path: RUN_PATH, method: 'POST', headers: { 'content-type': 'application/json' } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          try {
            resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as CommandResult);
          } catch (error) {
            reject(error);
          }
        });
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ argv }));
  });
}

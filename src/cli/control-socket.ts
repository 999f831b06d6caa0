// The unix socket through which the operator CLI runs its commands inside the process that owns the
// embedded store (a second process must never open PGlite's data directory).
import fs from 'node:fs';
import http from 'node:http';
import type { Services } from '../services.ts';
import type { CommandResult } from './commands.ts';

const MAX_REQUEST_BYTES = 64 * 1024;

export async function startControlSocket(socketPath: string, services: Services): Promise<() => Promise<void>> {
  // imported here: the CLI imports this module for runThroughOwner, which must not load the commands' modules
  const { runCommand } = await import('./commands.ts');
  fs.rmSync(socketPath, { force: true }); // left by a killed owner
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) request.destroy();
      else chunks.push(chunk);
    });
    request.on('end', async () => {
      let result: CommandResult;
      try {
        const { argv } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { argv: string[] };
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
      { socketPath, path: '/run', method: 'POST', headers: { 'content-type': 'application/json' } },
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

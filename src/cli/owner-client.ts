// The CLI's side of the operator's socket: runs a command inside the service that owns the embedded store, over HTTP
// on its unix socket (src/app/operator-socket.ts), with node's own client so the CLI loads nothing more.
import http from 'node:http';
import type { CommandResult } from './command-result.ts';
// the route's module loads its commands only when the service registers it: the client takes the path alone
import { RUN_PATH } from './operator-routes.ts';

/** the service refused the CLI's request (it ran no command): its message, said as it is */
export class OwnerRefusedError extends Error {}

export function runThroughOwner(socketPath: string, argv: string[]): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { socketPath, path: RUN_PATH, method: 'POST', headers: { 'content-type': 'application/json' } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if (response.statusCode !== 200) {
            const message = (() => {
              try {
                return String((JSON.parse(text) as { message?: unknown }).message ?? text);
              } catch {
                return text;
              }
            })();
            return reject(new OwnerRefusedError(`the running service refused the command: ${message}`));
          }
          try {
            resolve(JSON.parse(text) as CommandResult);
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

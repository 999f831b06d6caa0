// The operator's socket the CLI runs its commands through, inside the service that owns the embedded store: it runs
// the CLI's own request alone (POST /run with a list of arguments), and answers anything else with the service's
// error answers, without running a command.
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOperatorSocket } from '../../src/app/operator-socket.ts';
import { runThroughOwner } from '../../src/cli/owner-client.ts';
import { startTestService, tempDir, type TestService } from '../helpers/service.ts';
import { embeddedDataDir } from '../helpers/stores.ts';

let service: TestService;
let socketPath: string;
let stop: () => Promise<void>;

beforeAll(async () => {
  service = await startTestService({ DATA_DIR: await embeddedDataDir('tma-control-') });
  socketPath = path.join(tempDir(), 'control.sock');
  stop = await startOperatorSocket(socketPath, service.services);
});
afterAll(async () => {
  await stop?.();
  await service?.close();
});

function ask(
  method: string,
  route: string,
  body?: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ socketPath, path: route, method, headers }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode!, body: text }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

describe("the operator's socket", () => {
  it('runs the CLI’s request', async () => {
    const result = await runThroughOwner(socketPath, ['log', 'losses', '--json']);
    expect(result).toMatchObject({ exitCode: 0 });
    expect(JSON.parse(result.stdout)).toEqual({ losses: [] });
  });

  it('runs no command for another method, another path or a body that is not a list of arguments', async () => {
    const link = JSON.stringify({ argv: ['login-link', '--telegram-id', '1'] });
    expect(await ask('GET', '/run', undefined, {})).toMatchObject({ status: 405 });
    expect(await ask('PUT', '/run', link)).toMatchObject({ status: 405 });
    expect(await ask('POST', '/', link)).toEqual({
      status: 404,
      body: JSON.stringify({ message: 'No route POST /.' }),
    });
    expect(await ask('POST', '/run/../login', link)).toMatchObject({ status: 404 });
    expect(
      await ask('POST', '/run', 'argv=login-link', { 'content-type': 'application/x-www-form-urlencoded' }),
    ).toMatchObject({
      status: 415,
    });
    for (const body of [
      'login-link',
      '{"argv":"login-link --telegram-id 1"}',
      '{"argv":[1]}',
      '{"argv":["login-link"],"as":"admin"}',
      '{}',
      'null',
    ])
      expect(await ask('POST', '/run', body), body).toMatchObject({ status: 400 });
  });

  it('tells the CLI plainly when the service refuses its request', async () => {
    const huge = 'x'.repeat(70 * 1024);
    await expect(runThroughOwner(socketPath, ['apps', 'show', '--app-name', huge])).rejects.toThrow(
      /^the running service refused the command: .+/,
    );
  });
});

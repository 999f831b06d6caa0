// Settings from a .env file: read beneath the environment (which wins), said in the service's ready line with the
// address of the site and how to sign in, and refused in words when the file cannot be read.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadEnvFile } from '../../src/platform/config.ts';
import { childEnv, freePort, killAllChildren, PROJECT_ROOT } from '../helpers/service-process.ts';
import { tempDir } from '../helpers/service.ts';
import { embeddedDataDir } from '../helpers/stores.ts';

afterAll(() => killAllChildren());

describe('settings in a .env file', () => {
  it('reads a .env file beneath the environment, which wins', () => {
    const dir = tempDir();
    const file = path.join(dir, '.env');
    fs.writeFileSync(file, '# a comment\nTMA_TEST_FROM_FILE=file\nTMA_TEST_BOTH=file\n');
    process.env.TMA_TEST_BOTH = 'environment';
    try {
      expect(loadEnvFile(file)).toBe(file);
      expect(process.env.TMA_TEST_FROM_FILE).toBe('file');
      expect(process.env.TMA_TEST_BOTH).toBe('environment');
      expect(loadEnvFile(path.join(dir, 'none.env'))).toBeUndefined();
      expect(loadConfig({ PORT: '9090' }, file)).toMatchObject({ port: 9090, envFile: file });
      expect(() => loadEnvFile(dir)).toThrow(ConfigError);
    } finally {
      delete process.env.TMA_TEST_FROM_FILE;
      delete process.env.TMA_TEST_BOTH;
    }
  });

  it('the built service reads the .env of its directory and says, once ready, where the site is and how to sign in', async () => {
    const dir = tempDir();
    const port = await freePort();
    fs.writeFileSync(
      path.join(dir, '.env'),
      `DATA_DIR=${await embeddedDataDir()}\nHOST=127.0.0.1\nPORT=${port}\nLOG_LEVEL=info\n`,
    );
    const child = spawn(process.execPath, [path.join(PROJECT_ROOT, 'dist/server/main.js')], {
      cwd: dir,
      env: childEnv({}),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await expect.poll(() => output, { timeout: 120_000, interval: 200 }).toContain('"msg":"ready');
    child.kill('SIGTERM');
    const ready = JSON.parse(output.split('\n').find((line) => line.includes('"msg":"ready'))!) as Record<
      string,
      string
    >;
    expect(ready).toMatchObject({ site: `http://localhost:${port}`, envFile: path.join(dir, '.env') });
    expect(ready.msg).toContain(`the site is at http://localhost:${port}`);
    expect(ready.msg).toContain("BotFather's /setdomain");
    expect(ready.msg).toContain('npm run -s cli -- login-link --telegram-id <your Telegram id>');
  });
});

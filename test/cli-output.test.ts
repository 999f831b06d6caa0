// The operator CLI's output piped into a reader that stops early (`tokens list --json | head -c 100`):
// the CLI ends quietly, as Unix tools do, with no EPIPE stack trace.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestService, tempDir } from './helpers/service.ts';
import { childEnv, PROJECT_ROOT } from './helpers/service-process.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe('CLI output into a closed pipe', () => {
  it('stops quietly when the reader goes away after 100 bytes', async () => {
    const dataDir = tempDir('tma-cli-pipe-');
    dirs.push(dataDir);
    // more apps than a pipe's buffer holds as JSON, so the CLI is still writing when the reader leaves
    const service = await startTestService({ DATA_DIR: dataDir });
    await service.store.sql.query(
      `INSERT INTO apps (app_name, bot, domains, updated_at)
       SELECT 'pipe_app_' || n, '@pipe_test_bot', ARRAY['app' || n || '.example.com'], now() FROM generate_series(1, 3000) AS n`,
    );
    await service.close();

    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'tokens', 'list', '--json'], {
      cwd: PROJECT_ROOT,
      env: childEnv({ DATA_DIR: dataDir, LOG_LEVEL: 'warn' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    let read = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      read += chunk.length;
      if (read >= 100) child.stdout.destroy();
    });
    const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(read).toBeGreaterThanOrEqual(100);
    expect(stderr).toBe('');
    expect(exitCode).toBe(0);
  }, 90_000);
});

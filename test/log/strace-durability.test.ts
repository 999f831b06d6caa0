// An append is acknowledged only once its record is durable, checked in the system calls of a real process:
// under `strace -f`, every `ACK` the child prints must come after the record's page was written to data.mdb, the
// file fdatasync'd, and a meta page durably written (LMDB's commit). Two controls run plain lmdb with noSync and
// with noMetaSync, whose acknowledgements are not durable: the same check must fail for them.
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { servicesRequired } from '../helpers/environment.ts';
import { PROJECT_ROOT, childEnv } from '../helpers/service-process.ts';
import type { ChildConfig } from './fixtures/log-child.ts';
import { logDir, removeTempDirs } from './log-helpers.ts';
import { STRACE_CALLS, checkAcknowledgements, type AckCheck } from './strace-trace.ts';

afterAll(removeTempDirs);

function straceWorks(): boolean {
  const probe = spawnSync('strace', ['-f', '-qq', '-e', 'trace=none', 'true'], { stdio: 'ignore' });
  if (probe.status === 0) return true;
  if (servicesRequired) throw new Error('strace is required (CI=true or REQUIRE_SERVICES=1) but cannot trace here');
  return false;
}

const APPENDERS = 64;
const PER_APPENDER = 10;

async function traceChild(config: Partial<ChildConfig>): Promise<AckCheck & { stdout: string }> {
  const dir = logDir();
  const traceFile = path.join(path.dirname(dir), 'trace.txt');
  const childConfig: ChildConfig = { dir, appenders: APPENDERS, perAppender: PER_APPENDER, size: 100, ...config };
  const { stdout } = await promisify(execFile)(
    'strace',
    [
      '-f',
      '-qq',
      // whole pages, so the record's marker shows in the write that carries it
      '-s',
      '65536',
      '-e',
      `trace=${STRACE_CALLS}`,
      // a slower disk widens the window in which an early acknowledgement would show
      '-e',
      'inject=fdatasync:delay_exit=2000',
      '-o',
      traceFile,
      process.execPath,
      '--import',
      'tsx',
      'test/log/fixtures/log-child.ts',
      JSON.stringify(childConfig),
    ],
    { cwd: PROJECT_ROOT, env: childEnv({}), maxBuffer: 64 * 1024 ** 2 },
  );
  return { ...checkAcknowledgements(fs.readFileSync(traceFile, 'utf8')), stdout };
}

describe.runIf(straceWorks())('durable log acknowledgements, seen by strace', () => {
  it("acknowledges each append only after its page is written, the file fdatasync'd and a meta page durably written; concurrent appends share fdatasyncs", async () => {
    const result = await traceChild({});
    expect(result.stdout).toMatch(/DONE\n$/);
    expect(result.acks).toBe(APPENDERS * PER_APPENDER);
    expect(result.violations).toEqual([]);
    // group commit: one fdatasync covers what arrived while the previous one ran
    expect(result.syncs).toBeGreaterThan(0);
    expect(result.syncs).toBeLessThanOrEqual(result.acks / 8);
  });

  it.each([
    'noSync',
    'noMetaSync',
  ] as const)('the check catches acknowledgements that are not durable (plain lmdb with %s)', async (unsafe) => {
    const result = await traceChild({ unsafe });
    expect(result.acks).toBe(APPENDERS * PER_APPENDER);
    expect(result.violations.length).toBeGreaterThan(0);
  });
});

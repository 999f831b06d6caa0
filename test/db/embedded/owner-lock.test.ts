// The owner lock of an embedded data directory: a live owner keeps it; a process that died, even one its parent has
// not reaped yet (a zombie, as right after kill -9 under a supervisor or a container's PID 1), does not.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireOwnerLock, DataDirBusyError, liveOwner } from '../../../src/db/embedded/owner-lock.ts';

const dirs: string[] = [];
const children: { kill: () => void }[] = [];
afterAll(() => {
  for (const child of children) child.kill();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'owner-lock-'));
  dirs.push(dir);
  return dir;
}

/** the start time of a process as the lock records it (field 22 of /proc/<pid>/stat) */
const startOf = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!;
};

const stateOf = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
};

/** a lock file naming `pid` as the owner, as that process would have written it */
function lockedBy(dir: string, pid: number): void {
  fs.writeFileSync(
    path.join(dir, 'owner.lock'),
    JSON.stringify({ pid, started: startOf(pid), controlSocket: path.join(dir, 'control.sock') }),
  );
}

/** a process that exited and that its parent never reaps: a zombie until the parent goes */
async function zombie(): Promise<number> {
  const parent = spawn('sh', ['-c', 'sleep 0.1 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push({ kill: () => parent.kill('SIGKILL') });
  const pid = Number(
    await new Promise<string>((resolve) => parent.stdout.once('data', (data) => resolve(String(data)))),
  );
  for (let waited = 0; stateOf(pid) !== 'Z'; waited += 20) {
    if (waited > 5_000) throw new Error(`process ${pid} did not become a zombie`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return pid;
}

describe('the owner lock of an embedded data directory', () => {
  it('refuses while its owner lives', async () => {
    const dir = dataDir();
    const owner = spawn('sleep', ['60'], { stdio: 'ignore' });
    children.push({ kill: () => owner.kill('SIGKILL') });
    lockedBy(dir, owner.pid!);
    expect(liveOwner(dir)?.pid).toBe(owner.pid);
    expect(() => acquireOwnerLock(dir, path.join(dir, 'control.sock'))).toThrow(DataDirBusyError);
  });

  it('is taken over from an owner killed and not yet reaped (a zombie)', async () => {
    const dir = dataDir();
    const pid = await zombie();
    lockedBy(dir, pid);
    expect(liveOwner(dir)).toBeNull();
    const release = acquireOwnerLock(dir, path.join(dir, 'control.sock'));
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'owner.lock'), 'utf8')).pid).toBe(process.pid);
    release();
  });
});

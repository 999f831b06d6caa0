// The owner lock of an embedded data directory: a live owner keeps it; the kernel frees it the moment its owner dies,
// reaped or not (a zombie, as right after kill -9 under a supervisor or a container's PID 1), whatever a stale record
// or a child of the owner says.
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  acquireOwnerLock,
  DataDirBusyError,
  liveOwner,
  ownerLockAddress,
} from '../../../src/db/embedded/owner-lock.ts';

const HOLDER = path.join(import.meta.dirname, '../../helpers/lock-holder.ts');
const dirs: string[] = [];
const pids: number[] = [];
afterAll(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function dataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'owner-lock-'));
  dirs.push(dir);
  return dir;
}

const stateOf = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
};

type Kind = 'abstract' | 'file';

/**
 * A process holding dir's lock, started by a shell that never reaps it (so once killed it stays a zombie), with a
 * child of its own that outlives it.
 */
async function holder(dir: string, kind: Kind): Promise<{ pid: number; childPid: number; shell: ChildProcess }> {
  const shell = spawn(
    'sh',
    ['-c', `"$0" --import tsx "$1" "$2" "$3" & exec sleep 120`, process.execPath, HOLDER, dir, kind],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  pids.push(shell.pid!);
  let output = '';
  const held = await new Promise<string[]>((resolve, reject) => {
    shell.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const line = /held (\d+) (\d+)\n/.exec(output);
      if (line) resolve(line.slice(1));
    });
    shell.once('exit', () => reject(new Error(`the holder's shell exited: ${output}`)));
  });
  const [pid, childPid] = held.map(Number) as [number, number];
  pids.push(pid, childPid);
  return { pid, childPid, shell };
}

/** kills pid outright and waits until it is a zombie: dead, its files closed, not reaped */
async function killToZombie(pid: number): Promise<void> {
  process.kill(pid, 'SIGKILL');
  await expect.poll(() => stateOf(pid), { timeout: 5_000, interval: 10 }).toBe('Z');
}

describe.each<Kind>(['abstract', 'file'])('the owner lock of an embedded data directory (%s socket)', (kind) => {
  const addressOf = (dir: string) => ownerLockAddress(dir, kind === 'abstract');

  it('refuses a second owner while the first lives, naming its process', async () => {
    const dir = dataDir();
    const { pid } = await holder(dir, kind);
    expect((await liveOwner(dir, addressOf(dir)))?.pid).toBe(pid);
    const taking = acquireOwnerLock(dir, path.join(dir, 'control.sock'), addressOf(dir));
    await expect(taking).rejects.toThrow(DataDirBusyError);
    await expect(taking).rejects.toThrow(`in use by process ${pid}`);
  });

  it('is free the moment its owner is killed, though no one reaps it and its child lives on', async () => {
    const dir = dataDir();
    const { pid, childPid } = await holder(dir, kind);
    await killToZombie(pid);
    expect(stateOf(childPid), 'the owner’s child is alive').toMatch(/[SR]/);
    // the leader shows Z while the process's other threads still exit: its files close with the last of them
    await expect.poll(() => liveOwner(dir, addressOf(dir)), { timeout: 5_000, interval: 10 }).toBeNull();
    const release = await acquireOwnerLock(dir, path.join(dir, 'control.sock'), addressOf(dir));
    expect(stateOf(pid), 'the owner is still not reaped').toBe('Z');
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'owner.lock'), 'utf8')).pid).toBe(process.pid);
    release();
  });
});

describe('the owner lock of an embedded data directory', () => {
  it('is taken although a record left behind names a live process (its pid reused by another program)', async () => {
    const dir = dataDir();
    const other = spawn('sleep', ['60'], { stdio: 'ignore' });
    pids.push(other.pid!);
    fs.writeFileSync(path.join(dir, 'owner.lock'), JSON.stringify({ pid: other.pid, controlSocket: '/nowhere' }));
    expect(await liveOwner(dir)).toBeNull();
    const release = await acquireOwnerLock(dir, path.join(dir, 'control.sock'));
    release();
  });

  it('goes to exactly one of two starts at the same moment, and to the next once released', async () => {
    const dir = dataDir();
    const control = path.join(dir, 'control.sock');
    const [first, second] = await Promise.allSettled([acquireOwnerLock(dir, control), acquireOwnerLock(dir, control)]);
    const taken = [first, second].filter((outcome) => outcome.status === 'fulfilled');
    const refused = [first, second].filter((outcome) => outcome.status === 'rejected');
    expect(taken).toHaveLength(1);
    expect(refused.map((outcome) => outcome.reason)).toEqual([expect.any(DataDirBusyError)]);
    (taken[0] as PromiseFulfilledResult<() => void>).value();
    const again = await acquireOwnerLock(dir, control);
    again();
  });

  it('names the same lock for a directory reached through a symbolic link', () => {
    const dir = dataDir();
    const link = path.join(dataDir(), 'link');
    fs.symlinkSync(dir, link);
    expect(ownerLockAddress(link)).toBe(ownerLockAddress(dir));
  });
});

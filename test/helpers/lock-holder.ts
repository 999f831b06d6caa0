// A process that takes a data directory's owner lock, starts a child of its own, and says so; then waits to be killed.
//   node --import tsx test/helpers/lock-holder.ts <data dir> <abstract|file>
// It prints "held <its pid> <its child's pid>" once the lock is held.
import { spawn } from 'node:child_process';
import { acquireOwnerLock, ownerLockAddress } from '../../src/db/embedded/owner-lock.ts';

const [dataDir, kind] = process.argv.slice(2) as [string, string];
await acquireOwnerLock(dataDir, `${dataDir}/control.sock`, ownerLockAddress(dataDir, kind === 'abstract'));
// as the service starts its "starting" process: a child must not keep the lock once its parent is gone
const child = spawn('sleep', ['120'], { stdio: 'ignore', detached: true });
child.unref();
process.stdout.write(`held ${process.pid} ${child.pid}\n`);
setInterval(() => {}, 60_000);

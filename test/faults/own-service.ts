// startServiceProcess, made safe against suites running in parallel: it picks a free port and the child
// takes ~10 s to listen on it, long enough for another suite's process to take that port first; /healthz
// then answers from the wrong process and the child dies of EADDRINUSE (seen once: a whole run against
// another suite's service, then "connection refused" once that one stopped). Here the port must be held by
// our child itself (from /proc), else the child is killed and started again on another port.
import fs from 'node:fs';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';

/** socket inodes listening on the TCP port (IPv4 and IPv6) */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is ADDR:PORT, st 0A is LISTEN, inode is the 10th field
      if (fields[1]?.endsWith(`:${hex}`) && fields[3] === '0A') inodes.add(fields[9]!);
    }
  }
  return inodes;
}

/** whether process pid holds a socket listening on port */
export function listensOn(pid: number, port: number): boolean {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return false;
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      const match = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (match && inodes.has(match[1]!)) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startOwnServiceProcess(env: Record<string, string>, attempts = 3): Promise<ServiceProcess> {
  for (let attempt = 1; ; attempt++) {
    const service = await startServiceProcess(env);
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && service.running() && !listensOn(service.pid, service.port)) await sleep(100);
    if (service.running() && listensOn(service.pid, service.port)) return service;
    await service.kill();
    if (attempt >= attempts) throw new Error(`the service never listened on its own port (another process took it):\n${service.output()}`);
  }
}

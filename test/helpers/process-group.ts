// The processes of a process group as /proc shows them: what a supervisor that starts `npm start` ends up running.
import fs from 'node:fs';

export interface GroupProcess {
  pid: number;
  ppid: number;
  /** the command line, arguments joined by spaces */
  command: string;
  rssBytes: number;
}

const PAGE_BYTES = 4096;

/** every live process whose process group is pgid (processes that exit meanwhile are left out) */
export function processGroup(pgid: number): GroupProcess[] {
  const found: GroupProcess[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      // the fields after the command name, which is in parentheses and may hold spaces
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      const command = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
      found.push({ pid: Number(entry), ppid: Number(fields[1]), command, rssBytes: Number(fields[21]) * PAGE_BYTES });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

// Reads an `strace -f` trace of a log-child process and checks every acknowledgement against LMDB's commit protocol:
// the record's page written, the file synced, then a meta page written and itself durable, all before the `ACK`.
// Trace with `-e trace=` STRACE_CALLS: the clone calls tell the child's own threads from other processes it starts
// (tsx's esbuild service), whose file descriptors are numbered independently.

export const STRACE_CALLS = 'openat,close,fdatasync,fsync,msync,pwrite64,pwritev,writev,write,clone,clone3,fork,vfork';

/** LMDB's two meta pages sit in the first two pages of data.mdb (4 KiB pages here) */
const META_AREA_BYTES = 2 * 4096;

export interface AckCheck {
  acks: number;
  /** fdatasync/fsync of data.mdb (and msync) that succeeded */
  syncs: number;
  /** acknowledgements printed before their record was durable, with the step that was missing */
  violations: { id: string; missing: string }[];
}

interface Call {
  /** line of the trace where the call completed (for writes and syncs) or started (for the ACK) */
  at: number;
  tid: string;
  text: string;
}

/** joins `<unfinished ...>` / `<... resumed>` halves; a call is placed where it completed */
function calls(trace: string): { completed: Call[]; ackStarts: Map<string, number> } {
  const pending = new Map<string, { text: string; at: number }>();
  const completed: Call[] = [];
  const ackStarts = new Map<string, number>();
  const lines = trace.split('\n');
  for (let at = 0; at < lines.length; at++) {
    const match = /^(\d+)\s+(.*)$/.exec(lines[at]!);
    if (!match) continue;
    const [, pid, rest] = match as unknown as [string, string, string];
    const ack = /^write\(1, "ACK (\S+) \d+\\n"/.exec(rest);
    if (ack && !ackStarts.has(ack[1]!)) ackStarts.set(ack[1]!, at);
    if (rest.endsWith('<unfinished ...>')) {
      pending.set(pid, { text: rest.slice(0, -'<unfinished ...>'.length).trimEnd(), at });
      continue;
    }
    const resumed = /^<\.\.\. \w+ resumed>(.*)$/.exec(rest);
    if (resumed) {
      const start = pending.get(pid);
      pending.delete(pid);
      if (start) completed.push({ at, tid: pid, text: start.text + resumed[1] });
      continue;
    }
    completed.push({ at, tid: pid, text: rest });
  }
  return { completed, ackStarts };
}

/** the threads of the traced process itself (the first one in the trace), leaving out processes it started */
function ownThreads(completed: Call[]): Set<string> {
  const parent = new Map<string, { of: string; thread: boolean }>();
  for (const { tid, text } of completed) {
    const match = /^(?:clone3?|fork|vfork)\(.*\)\s+= (\d+)$/.exec(text);
    if (match) parent.set(match[1]!, { of: tid, thread: /CLONE_THREAD/.test(text) });
  }
  const processOf = (tid: string): string => {
    const link = parent.get(tid);
    return link?.thread ? processOf(link.of) : tid;
  };
  const main = completed[0]?.tid;
  return new Set(completed.map((call) => call.tid).filter((tid) => processOf(tid) === main));
}

export function checkAcknowledgements(trace: string): AckCheck {
  const all = calls(trace);
  const own = ownThreads(all.completed);
  const completed = all.completed.filter((call) => own.has(call.tid));
  const { ackStarts } = all;
  const dataFds = new Map<string, { dsync: boolean }>();
  const firstWrite = new Map<string, number>();
  const syncs: number[] = [];
  const metaWrites: { at: number; dsync: boolean }[] = [];

  for (const { at, text } of completed) {
    let match: RegExpExecArray | null;
    if ((match = /^openat\(AT_FDCWD, "([^"]*)", ([A-Z_|]+)(?:, \d+)?\) = (\d+)$/.exec(text))) {
      if (match[1]!.endsWith('/data.mdb') || match[1] === 'data.mdb')
        dataFds.set(match[3]!, { dsync: /O_DSYNC|O_SYNC/.test(match[2]!) });
      else dataFds.delete(match[3]!);
    } else if ((match = /^close\((\d+)\)\s+= 0/.exec(text))) {
      dataFds.delete(match[1]!);
    } else if ((match = /^(?:fdatasync|fsync)\((\d+)\)\s+= 0/.exec(text))) {
      if (dataFds.has(match[1]!)) syncs.push(at);
    } else if (/^msync\(.*\)\s+= 0/.test(text)) {
      syncs.push(at);
    } else if ((match = /^(pwrite64|pwritev|writev|write)\((\d+), /.exec(text)) && dataFds.has(match[2]!)) {
      if (!/\)\s+= \d+$/.test(text)) continue; // failed writes make nothing durable
      for (const marker of text.matchAll(/<A([\d-]+)Z>/g)) {
        if (!firstWrite.has(marker[1]!)) firstWrite.set(marker[1]!, at);
      }
      const offset = /, (\d+)\)\s+= \d+$/.exec(text);
      if (match[1] === 'pwrite64' && offset && Number(offset[1]) < META_AREA_BYTES) {
        metaWrites.push({ at, dsync: dataFds.get(match[2]!)!.dsync });
      }
    }
  }

  const after = (list: number[], at: number) => list.find((value) => value > at);
  const violations: AckCheck['violations'] = [];
  for (const [id, ackAt] of ackStarts) {
    const written = firstWrite.get(id);
    if (written === undefined || written > ackAt) {
      violations.push({ id, missing: 'a write of the record to data.mdb' });
      continue;
    }
    const synced = after(syncs, written);
    if (synced === undefined || synced > ackAt) {
      violations.push({ id, missing: 'an fdatasync of data.mdb after the record was written' });
      continue;
    }
    // a meta page written after that sync, and durable (an O_DSYNC write, or synced after) before the ACK
    const durableMeta = metaWrites.some((write) => {
      if (write.at < synced || write.at > ackAt) return false;
      const durableAt = write.dsync ? write.at : after(syncs, write.at);
      return durableAt !== undefined && durableAt < ackAt;
    });
    if (!durableMeta) {
      violations.push({ id, missing: 'a durable meta page write after that fdatasync' });
    }
  }
  return { acks: ackStarts.size, syncs: syncs.length, violations };
}

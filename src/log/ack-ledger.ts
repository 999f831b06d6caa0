// The acknowledgement ledger beside the log's file: each durable record's sequence number and events, written before
// its append resolves, so that a log file found damaged (or replaced) is measured against what was acknowledged. It is
// never synced: a killed process leaves what it wrote in the page cache, a power cut may leave it short (the loss it
// counts is then a floor). It holds numbers only, never an event.
import fs from 'node:fs';
import path from 'node:path';

export const LEDGER_FILE = 'acknowledged';
/** a sequence number (float64) and its record's events (uint32) */
const ENTRY_BYTES = 12;
/** past this size, entries of released records are dropped from the file (a backlog that never empties) */
const REWRITE_BYTES = 8 * 1024 ** 2;

/** the records the ledger names, sequence number → events (a torn last entry left out); null: there is no ledger */
export function readLedger(dir: string): Map<number, number> | null {
  const entries = new Map<number, number>();
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(path.join(dir, LEDGER_FILE));
  } catch {
    return null;
  }
  for (let at = 0; at + ENTRY_BYTES <= bytes.length; at += ENTRY_BYTES) {
    const seq = bytes.readDoubleLE(at);
    if (Number.isSafeInteger(seq) && seq > 0) entries.set(seq, bytes.readUInt32LE(at + 8));
  }
  return entries;
}

function encode(entries: Iterable<readonly [number, number]>): Buffer {
  const list = [...entries];
  const bytes = Buffer.alloc(list.length * ENTRY_BYTES);
  list.forEach(([seq, weight], index) => {
    bytes.writeDoubleLE(seq, index * ENTRY_BYTES);
    bytes.writeUInt32LE(Math.min(weight, 0xffffffff), index * ENTRY_BYTES + 8);
  });
  return bytes;
}

export class AckLedger {
  private size: number;
  /** the file's size once it was last rewritten: it is rewritten again when it has grown well past that */
  private rewrittenSize: number;

  private constructor(
    private readonly file: string,
    private fd: number,
  ) {
    this.size = fs.fstatSync(fd).size;
    this.rewrittenSize = this.size;
  }

  /** a ledger naming exactly these records (the ones the log holds at open); throws when it cannot be written */
  static start(dir: string, entries: Iterable<readonly [number, number]>): AckLedger {
    const file = path.join(dir, LEDGER_FILE);
    const staged = `${file}.new`;
    fs.writeFileSync(staged, encode(entries), { mode: 0o600 });
    fs.renameSync(staged, file);
    return new AckLedger(file, fs.openSync(file, 'a'));
  }

  /** the ledger as it is on disk, appended to (when it could not be rewritten) */
  static reopen(dir: string): AckLedger {
    const file = path.join(dir, LEDGER_FILE);
    return new AckLedger(file, fs.openSync(file, 'a', 0o600));
  }

  /** a record durably in the log; a failed write (a full disk) only makes a later count of losses a floor */
  record(seq: number, weight: number): void {
    try {
      this.size += fs.writeSync(this.fd, encode([[seq, weight]]));
    } catch {
      // the log's own write succeeded: the ledger only witnesses it
    }
  }

  /**
   * records through `through` are released: their entries go once none waits, or once the file grew well past its
   * last rewrite (a backlog that never empties)
   */
  released(through: number, nothingWaits: boolean): void {
    try {
      if (nothingWaits) {
        fs.ftruncateSync(this.fd, 0);
        this.size = 0;
        this.rewrittenSize = 0;
      } else if (this.size > Math.max(REWRITE_BYTES, 2 * this.rewrittenSize)) {
        const kept = [...(readLedger(path.dirname(this.file)) ?? [])].filter(([seq]) => seq > through);
        // the new file in place and open before the old descriptor closes: a failure leaves the old one in use
        const next = AckLedger.start(path.dirname(this.file), kept);
        fs.closeSync(this.fd);
        this.fd = next.fd;
        this.size = next.size;
        this.rewrittenSize = next.size;
      }
    } catch {
      // a ledger left longer than needed only names records already released, which no count uses
    }
  }

  close(): void {
    try {
      fs.closeSync(this.fd);
    } catch {
      // closed already
    }
  }
}

// Backlog accounting in memory: the size of every record not yet released, by sequence number, so that stats and
// release never scan the log (4 bytes per sequence number waiting).

/** a jump in numbering larger than this starts a new run instead of filling the gap with empty slots */
const MAX_GAP = 65_536;

/** consecutive sequence numbers from `base`: slot = the record's size + 1, or 0 when the number has no record */
class Run {
  slots = new Uint32Array(1024);
  /** index of the slot of sequence number `base` */
  start = 0;
  /** slots in use from start */
  length = 0;

  constructor(public base: number) {}

  get end(): number {
    return this.base + this.length;
  }

  set(seq: number, size: number): void {
    const offset = seq - this.base;
    if (this.start + offset >= this.slots.length) this.makeRoom(offset + 1);
    this.slots[this.start + offset] = size + 1;
    this.length = offset + 1;
  }

  /** live slots move to the front; the array doubles only when they would fill more than half of it */
  private makeRoom(needed: number): void {
    if (needed * 2 > this.slots.length) {
      let capacity = this.slots.length;
      while (capacity < needed * 2) capacity *= 2;
      const next = new Uint32Array(capacity);
      next.set(this.slots.subarray(this.start, this.start + this.length));
      this.slots = next;
    } else {
      this.slots.copyWithin(0, this.start, this.start + this.length);
      this.slots.fill(0, this.length);
    }
    this.start = 0;
  }
}

export class Backlog {
  private runs: Run[] = [];
  records = 0;
  bytes = 0;

  /** a record that is durably in the log (sequence numbers only grow; numbers in between may have no record) */
  add(seq: number, size: number): void {
    let run = this.runs.at(-1);
    if (run && seq < run.end) throw new Error(`log record ${seq} counted twice`);
    if (!run || seq - run.end > MAX_GAP) {
      run = new Run(seq);
      this.runs.push(run);
    }
    run.set(seq, size);
    this.records += 1;
    this.bytes += size;
  }

  /** forgets every sequence number up to through; returns those that had a record (to delete), in order */
  releaseThrough(through: number): number[] {
    const released: number[] = [];
    while (this.runs.length > 0) {
      const run = this.runs[0]!;
      const count = Math.min(Math.max(through - run.base + 1, 0), run.length);
      for (let i = 0; i < count; i++) {
        const slot = run.slots[run.start + i]!;
        if (slot === 0) continue;
        released.push(run.base + i);
        this.records -= 1;
        this.bytes -= slot - 1;
      }
      run.slots.fill(0, run.start, run.start + count);
      run.start += count;
      run.length -= count;
      run.base += count;
      if (run.length > 0) break;
      this.runs.shift();
    }
    return released;
  }

  /** the sequence number of the oldest record waiting, or null */
  firstSeq(): number | null {
    for (const run of this.runs) {
      for (let i = 0; i < run.length; i++) {
        if (run.slots[run.start + i] !== 0) return run.base + i;
      }
    }
    return null;
  }
}

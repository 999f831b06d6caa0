// Free space under the log's directory, from a statfs cached briefly, so an append can be refused before the disk fills.
import fs from 'node:fs';

/** how long a statfs answer is trusted; appends in between are subtracted from it */
export const DISK_SPACE_REFRESH_MS = 1_000;

/**
 * LMDB stores a record in B-tree leaf pages, or in whole overflow pages when it is larger than about half a page,
 * so a record can take up to about twice its size on disk: bytes appended since the last statfs count double.
 */
const DISK_BYTES_PER_BYTE = 2;

export class DiskSpace {
  private freeAtRefresh = Number.POSITIVE_INFINITY;
  private appendedSinceRefresh = 0;
  private refreshedAt = 0;
  private refreshing: Promise<void> | null = null;
  private reserved = 0;

  constructor(
    private readonly dir: string,
    /** appends are refused while less than this would stay free; 0 turns the check off */
    private readonly minFreeBytes: number,
    private readonly refreshMs = DISK_SPACE_REFRESH_MS,
    /** bytes other writers on the same disk (the embedded store) still need, kept free on top; asked at each statfs */
    private readonly reserve: () => number = () => 0,
  ) {}

  /** the first reading, so the very first append is already checked */
  async refresh(): Promise<void> {
    this.refreshing ??= fs.promises
      .statfs(this.dir)
      .then(
        (stats) => {
          this.freeAtRefresh = stats.bavail * stats.bsize;
          this.appendedSinceRefresh = 0;
          try {
            this.reserved = Math.max(0, this.reserve());
          } catch {
            // the reserve cannot be judged now (its directory is being replaced): the last one stands
          }
        },
        // a failing statfs (the directory is gone, an odd filesystem) must not stop ingestion: the write itself
        // still fails cleanly when the disk is really full
        () => {
          this.freeAtRefresh = Number.POSITIVE_INFINITY;
        },
      )
      .finally(() => {
        this.refreshedAt = Date.now();
        this.refreshing = null;
      });
    return this.refreshing;
  }

  /** bytes believed free now */
  estimatedFree(): number {
    return this.freeAtRefresh - this.appendedSinceRefresh * DISK_BYTES_PER_BYTE;
  }

  /** whether an append of this many bytes keeps the headroom; synchronous, starts a refresh when the reading is old */
  allows(bytes: number): boolean {
    if (this.minFreeBytes <= 0) return true;
    if (Date.now() - this.refreshedAt > this.refreshMs) void this.refresh();
    return this.estimatedFree() - bytes * DISK_BYTES_PER_BYTE >= this.minFreeBytes + this.reserved;
  }

  /** an append of this many bytes was handed to the store */
  note(bytes: number): void {
    this.appendedSinceRefresh += bytes;
  }
}

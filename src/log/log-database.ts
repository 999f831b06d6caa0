// The durable log's LMDB file: its settings, and the checked open of it (every record read once; a file LMDB cannot
// read is rolled back one transaction, or moved aside for a fresh log, so the service always starts), with what the
// open lost counted against the acknowledgement ledger and said in one line.
import fs from 'node:fs';
import path from 'node:path';
import { open, type RootDatabase, type RootDatabaseOptionsWithPath } from 'lmdb';
import { AckLedger, readLedger } from './ack-ledger.ts';
import { type LogLoss, tellLoss } from './losses.ts';
import { DATA_FILE, DamagedLogError, probeLogFile, type ProbeOutcome } from './probe.ts';
import { decodeRecord, decodeWatermark, encodeWatermark } from './record-format.ts';

/** the key of the watermark record; records use keys from 1 */
export const WATERMARK_KEY = 0;
export { DATA_FILE };
const LOCK_FILE = 'lock.mdb';

export type LogDatabase = RootDatabase<Buffer, number>;

/** pino-compatible: the service passes its logger */
export interface DurableLogLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface ScannedRecord {
  seq: number;
  size: number;
  appendedAt: number;
  /** what the record counts for in a loss (its events; 1 without weightOf) */
  weight: number;
}

export interface OpenedLogDatabase {
  db: LogDatabase;
  /** records waiting, in order */
  records: ScannedRecord[];
  /** every sequence number up to this is released */
  releasedThrough: number;
  /** no sequence number up to this may be handed out again */
  numberedThrough: number;
  /** acknowledged records the file did not hold any more, or null */
  loss: LogLoss | null;
  /** the ledger the log writes each durable record to */
  ledger: AckLedger;
}

export interface OpenLogDatabaseOptions {
  /** LMDB's initial map: address space, not disk */
  mapSize: number;
  /** the store holds every record through this sequence number */
  loadedThrough: number;
  logger: DurableLogLogger;
  /** the check of the latest state, started before (probeLog with the same dir and map size) */
  probed?: Promise<ProbeOutcome>;
  /** what a record's payload counts for in a loss (default 1) */
  weightOf?: (payload: Buffer) => number;
}

/** what damage the open met: the cause and, for a file moved aside, where it went */
interface Damage {
  what: string;
  cause: string;
  movedTo?: string;
}

interface Scanned extends Omit<OpenedLogDatabase, 'loss' | 'ledger'> {
  damage: Damage[];
  /** records to delete before the log is used: damaged ones, and released ones a stopped release left behind */
  toDelete: number[];
  /** the watermark record must be written before the log is used */
  watermarkStale: boolean;
}

/**
 * The LMDB file with the settings every open uses, without the checks openLogDatabase makes (compact.ts reopens the
 * copy it has just written). Why each setting:
 * - overlappingSync: false — LMDB's own commit: write the pages, fdatasync the file, then write the meta page through
 *   an O_DSYNC descriptor; a put resolves after all of it (test/log/strace-durability.test.ts checks each step in the
 *   system calls). lmdb's default (overlappingSync on Linux) moves the flush out of the write lock and documents put
 *   promises as resolving at commit, before the flush; lmdb 3.5.6 in fact resolves them after its flush too, but
 *   that is not its contract, and it also decides after a crash whether the latest commit counts from the boot id.
 * - eventTurnBatching: false — puts still share a transaction: everything queued while the previous transaction
 *   is being written and synced goes into the next one (group commit, one fdatasync for all of it; bench/log.ts counts
 *   them). With event-turn batching on, lmdb keeps a promise of its own per batch that nobody awaits, so a
 *   transaction failing for a full disk becomes an unhandled rejection and ends the process.
 * - the default key encoding with number keys, and binary values: the caller's bytes behind a small header
 *   (record-format.ts), which durable-log.ts puts with MDB_APPEND since keys only grow (full pages instead of
 *   half-split ones).
 * - mapSize: address space only. Without a writable map LMDB grows the file page by page as it writes (nothing is
 *   preallocated), and lmdb-js enlarges the map by itself if the file outgrows it.
 */
export function openLogDatabaseUnchecked(dir: string, mapSize: number, usePreviousSnapshot: boolean): LogDatabase {
  const options: RootDatabaseOptionsWithPath & { usePreviousSnapshot?: boolean } = {
    path: dir,
    encoding: 'binary',
    overlappingSync: false,
    eventTurnBatching: false,
    mapSize,
    // MDB_PREVSNAPSHOT: open at the transaction before the latest (lmdb reads it; its type declarations omit it)
    usePreviousSnapshot,
  };
  return open<Buffer, number>(options);
}

/**
 * A sequence number above any a lost log can have handed out, without knowing that log: numbers come from the
 * clock in microseconds, and no log appends a million records a second for long (LMDB does about a tenth of it).
 */
function clockFloor(): number {
  return Date.now() * 1000;
}

/**
 * Reads the whole file once: LMDB keeps no checksums, so this is where a damaged page shows, before any write
 * could build on it. Throws DamagedLogError when the structure cannot be trusted; damaged records alone are dropped.
 */
function scan(db: LogDatabase, dir: string, weightOf: (payload: Buffer) => number): Scanned {
  // pages LMDB believes committed but the file does not hold would be read through the map and kill the process
  // (SIGBUS), so a short file is refused before any page is touched
  const stats = db.getStats() as { lastPageNumber: number; pageSize: number };
  const fileSize = fs.statSync(path.join(dir, DATA_FILE)).size;
  const neededSize = (stats.lastPageNumber + 1) * stats.pageSize;
  if (fileSize < neededSize) {
    throw new DamagedLogError(`${DATA_FILE} is ${fileSize} bytes but its last committed page ends at ${neededSize}`);
  }

  const stored = db.getBinary(WATERMARK_KEY);
  const watermark = stored === undefined ? { releasedThrough: 0, numberedThrough: 0 } : decodeWatermark(stored);
  const releasedThrough = watermark?.releasedThrough ?? 0;

  const records: ScannedRecord[] = [];
  const toDelete: number[] = [];
  const damaged: number[] = [];
  let previous = WATERMARK_KEY;
  try {
    for (const { key, value } of db.getRange({ start: WATERMARK_KEY + 1 })) {
      if (typeof key !== 'number' || !Number.isSafeInteger(key) || key <= previous) {
        throw new DamagedLogError(`key ${String(key)} after ${previous} is not a growing sequence number`);
      }
      previous = key;
      const decoded = decodeRecord(value);
      if (decoded === null) damaged.push(key);
      // a release writes its watermark first and deletes below it after: these are what a stopped one left behind
      else if (key <= releasedThrough) toDelete.push(key);
      else
        records.push({
          seq: key,
          size: decoded.payload.length,
          appendedAt: decoded.appendedAt,
          weight: weightOf(decoded.payload),
        });
    }
  } catch (error) {
    if (error instanceof DamagedLogError) throw error;
    throw new DamagedLogError(`reading the records failed: ${(error as Error).message}`);
  }

  const damage: Damage[] = [];
  if (damaged.length > 0) {
    damage.push({
      what: `${damaged.length} records whose bytes are not what was written were dropped`,
      cause: 'checksum mismatch',
    });
    toDelete.push(...damaged);
  }
  let numberedThrough = Math.max(previous, releasedThrough, watermark?.numberedThrough ?? 0);
  if (watermark === null) {
    damage.push({
      what: 'the watermark record is damaged; every record still present is kept (and loaded again)',
      cause: 'checksum mismatch in the watermark',
    });
    numberedThrough = Math.max(numberedThrough, clockFloor());
  }
  return { db, records, releasedThrough, numberedThrough, toDelete, watermarkStale: watermark === null, damage };
}

async function tryOpen(
  dir: string,
  options: OpenLogDatabaseOptions,
  usePreviousSnapshot: boolean,
  probed = probeLogFile(dir, options.mapSize, usePreviousSnapshot),
): Promise<Scanned | Error> {
  const { mapSize, logger } = options;
  const { damage, unusable } = await probed;
  if (damage) return damage;
  if (unusable) {
    logger.warn(
      { reason: unusable },
      'durable log: the probe that opens the log in a separate process could not run; opening it directly',
    );
  }
  let db: LogDatabase | undefined;
  try {
    db = openLogDatabaseUnchecked(dir, mapSize, usePreviousSnapshot);
    return scan(db, dir, options.weightOf ?? (() => 1));
  } catch (error) {
    await db?.close().catch(() => undefined);
    return error as Error;
  }
}

function moveAside(dir: string): string {
  const aside = path.join(dir, `damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  fs.mkdirSync(aside, { recursive: true, mode: 0o700 });
  for (const file of [DATA_FILE, LOCK_FILE]) {
    if (fs.existsSync(path.join(dir, file))) fs.renameSync(path.join(dir, file), path.join(aside, file));
  }
  return aside;
}

/** the newest state of the log that can be read: the latest transaction, the one before it, or a new empty log */
async function openReadable(dir: string, options: OpenLogDatabaseOptions): Promise<Scanned> {
  const fresh = !fs.existsSync(path.join(dir, DATA_FILE));
  const latest = await tryOpen(dir, options, false, options.probed);
  if (!(latest instanceof Error)) {
    // a new file gets its watermark at once, so the numbering floor it may carry survives a restart
    latest.watermarkStale ||= fresh;
    return latest;
  }

  // LMDB keeps the previous transaction intact beside the latest one (copy-on-write, two meta pages)
  const previous = await tryOpen(dir, options, true);
  if (!(previous instanceof Error)) {
    previous.damage.unshift({
      what: 'the latest transaction is unreadable; the log was rolled back to the one before it',
      cause: latest.message,
    });
    // the lost transaction's numbers may have been acknowledged: none is handed out again
    previous.numberedThrough = Math.max(previous.numberedThrough, clockFloor());
    previous.watermarkStale = true;
    return previous;
  }

  const aside = moveAside(dir);
  const started = await tryOpen(dir, options, false);
  if (started instanceof Error) throw started;
  started.numberedThrough = clockFloor();
  started.watermarkStale = true;
  started.damage.push({
    what:
      'the log file is damaged beyond what LMDB can read; it was moved aside and a new, empty log started ' +
      '(the file stays for inspection and can be deleted)',
    cause: latest.message,
    movedTo: aside,
  });
  return started;
}

/**
 * The acknowledged records (the ledger's) above what the store holds that the readable state lacks: lost with the
 * damage, or with a file replaced by an older one
 */
function lossOf(opened: Scanned, ledger: Map<number, number>): LogLoss | null {
  const held = new Set(opened.records.map((record) => record.seq));
  const lost = [...ledger].filter(([seq]) => seq > opened.releasedThrough && !held.has(seq));
  if (lost.length === 0) return null;
  const seqs = lost.map(([seq]) => seq);
  return {
    at: new Date().toISOString(),
    records: lost.length,
    events: lost.reduce((sum, [, weight]) => sum + weight, 0),
    firstSeq: Math.min(...seqs),
    lastSeq: Math.max(...seqs),
    cause:
      opened.damage.length > 0
        ? opened.damage.map((found) => `${found.what} (${found.cause})`).join('; ')
        : 'the log file holds fewer records than were acknowledged (an older copy, or cut)',
    movedTo: opened.damage.find((found) => found.movedTo)?.movedTo,
  };
}

/** records the store already holds are released now; numbering continues above them even if the log lost them */
function applyLoadedThrough(opened: Scanned, options: OpenLogDatabaseOptions): void {
  const { loadedThrough, logger } = options;
  if (loadedThrough <= opened.releasedThrough) return;
  if (loadedThrough > opened.numberedThrough) {
    logger.warn(
      { loadedThrough, logEndsAt: opened.numberedThrough },
      'durable log: the store holds records numbered beyond the end of this log (the log was replaced); numbering continues after them',
    );
  }
  const released = opened.records.filter((record) => record.seq <= loadedThrough);
  opened.records = opened.records.slice(released.length);
  opened.toDelete.push(...released.map((record) => record.seq));
  opened.releasedThrough = loadedThrough;
  opened.numberedThrough = Math.max(opened.numberedThrough, loadedThrough);
  opened.watermarkStale = true;
}

/** one synchronous transaction before the log is used; if it fails (a full disk), the next open does it again */
function commitOpenChanges(opened: Scanned, logger: DurableLogLogger): void {
  const { db, toDelete, watermarkStale, releasedThrough, numberedThrough } = opened;
  if (toDelete.length === 0 && !watermarkStale) return;
  try {
    db.transactionSync(() => {
      if (watermarkStale) db.putSync(WATERMARK_KEY, encodeWatermark({ releasedThrough, numberedThrough }));
      for (const seq of toDelete) db.removeSync(seq);
    });
  } catch (error) {
    logger.warn({ err: error }, 'durable log: cleaning up at open failed; it is tried again at the next open');
  }
}

/**
 * The ledger of the records the log holds now. On a full disk the old file stays (it names at least those records, and
 * released ones no count uses) and is appended to
 */
function startLedger(dir: string, records: ScannedRecord[], logger: DurableLogLogger): AckLedger {
  try {
    return AckLedger.start(
      dir,
      records.map((record) => [record.seq, record.weight]),
    );
  } catch (error) {
    logger.warn({ err: error }, 'durable log: the acknowledgement ledger could not be rewritten; the old one is kept');
    return AckLedger.reopen(dir);
  }
}

/**
 * Opens (or creates) the log's LMDB file in dir and checks every record in it; never refuses because of damage (see
 * openReadable). Records the store already holds (loadedThrough) are released before it is used.
 */
export async function openLogDatabase(dir: string, options: OpenLogDatabaseOptions): Promise<OpenedLogDatabase> {
  fs.mkdirSync(dir, { recursive: true });
  const opened = await openReadable(dir, options);
  applyLoadedThrough(opened, options);
  const acknowledged = readLedger(dir);
  const loss = acknowledged && lossOf(opened, acknowledged);
  if (!loss && opened.damage.length > 0) {
    const damage = opened.damage;
    options.logger.warn(
      { cause: damage.map((found) => found.cause).join('; '), movedTo: damage.find((found) => found.movedTo)?.movedTo },
      `durable log: ${damage.map((found) => found.what).join('; ')}; ` +
        (acknowledged ? 'no acknowledged event was lost' : 'how many events were lost is not known (no ledger)'),
    );
  }
  // kept beside the log until an operator acknowledges it (/healthz, the metrics, the CLI), before the ledger that
  // measured it is rewritten
  if (loss) tellLoss(dir, loss, options.logger);
  commitOpenChanges(opened, options.logger);
  const { db, records, releasedThrough, numberedThrough } = opened;
  return { db, records, releasedThrough, numberedThrough, loss, ledger: startLedger(dir, records, options.logger) };
}

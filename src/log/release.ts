// Deletes released records from the log's file: the watermark first, then the records in chunks, keeping the numbers
// of those a failed transaction left in place for the next release to try again.
import { commitFailure } from './errors.ts';
import { WATERMARK_KEY, type LogDatabase } from './log-database.ts';

/** a release deletes this many records per event-loop turn, so a large one does not stall ingestion */
const RELEASE_CHUNK = 4096;

/**
 * The watermark is made durable first: a restart then knows the release happened (and never numbers below it),
 * whatever part of the deletions after it got done. They follow in chunks. Records not deleted are given to
 * undeleted; the first failure is thrown once every deletion has settled.
 */
export async function deleteReleased(
  db: LogDatabase,
  watermark: Buffer,
  seqs: number[],
  undeleted: (seqs: number[]) => void,
): Promise<void> {
  try {
    await db.put(WATERMARK_KEY, watermark);
  } catch (error) {
    undeleted(seqs);
    throw await commitFailure(error, WATERMARK_KEY);
  }
  // writes of one transaction share one promise: every distinct one is observed, so a transaction that fails
  // (a full disk) is never an unhandled rejection, and the records it should have deleted are kept for a retry
  const outcomes: Promise<unknown>[] = [];
  for (let start = 0; start < seqs.length; start += RELEASE_CHUNK) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    let previous: Promise<unknown> | null = null;
    let firstOfTransaction = start;
    const observe = (promise: Promise<unknown>, from: number, to: number) =>
      outcomes.push(
        promise.then(undefined, (error: unknown) => {
          undeleted(seqs.slice(from, to));
          throw error;
        }),
      );
    const end = Math.min(start + RELEASE_CHUNK, seqs.length);
    for (let i = start; i < end; i++) {
      const promise = db.remove(seqs[i]!);
      if (previous !== null && promise !== previous) {
        observe(previous, firstOfTransaction, i);
        firstOfTransaction = i;
      }
      previous = promise;
    }
    if (previous !== null) observe(previous, firstOfTransaction, end);
  }
  const failures = (await Promise.allSettled(outcomes)).filter((outcome) => outcome.status === 'rejected');
  const errors = await Promise.all(
    failures.map((failure) => commitFailure((failure as PromiseRejectedResult).reason, seqs[0] ?? 0)),
  );
  if (errors.length > 0) throw errors[0];
}

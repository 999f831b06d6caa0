// Opens the log's LMDB file in a throwaway process and touches what a start-up touches: some damage makes LMDB crash
// (SIGSEGV on a bad meta page, SIGBUS on a short file, an abort on a bad free-page list) instead of returning an
// error, and a crash here costs only this process. Plain JavaScript so it starts without the TypeScript loader.
// Usage: node probe.mjs <dir> <latest|previous> <mapSize>; exit code 0 = the file can be opened this way.
import fs from 'node:fs';
import path from 'node:path';
import { open } from 'lmdb';

const [dir, which, mapSize] = process.argv.slice(2);
/** exit codes the parent reads as "this file cannot be opened this way"; any other failure means the probe broke */
const SHORT_FILE = 3;
const LMDB_ERROR = 4;

try {
  const db = open({
    path: dir,
    encoding: 'binary',
    overlappingSync: false,
    eventTurnBatching: false,
    mapSize: Number(mapSize),
    usePreviousSnapshot: which === 'previous',
  });
  const { lastPageNumber, pageSize } = db.getStats();
  if (fs.statSync(path.join(dir, 'data.mdb')).size < (lastPageNumber + 1) * pageSize) {
    console.error(`data.mdb is shorter than its last committed page (${lastPageNumber})`);
    process.exit(SHORT_FILE);
  }
  let bytes = 0;
  for (const { value } of db.getRange({})) bytes += value.length;
  // a write reads the free-page list, as the log's first append will; rewriting the watermark changes nothing
  const watermark = db.getBinary(0);
  if (watermark) db.transactionSync(() => db.putSync(0, Buffer.from(watermark)));
  await db.close();
  console.log(bytes);
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(LMDB_ERROR);
}

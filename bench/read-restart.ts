// Read budget bench on the embedded store: what stopping a read past its budget costs, by ending PGlite's thread and
// starting it again, on a data directory holding some data. Figures, each against a baseline of the same run:
//   - a write's latency on a quiet store (baseline);
//   - a clean open of the store (its thread started, migrations checked) on the same directory (baseline of a restart);
//   - a read of --sleep seconds with a budget of --budget ms: when its caller is answered, and when a write sent while
//     it ran is committed (the read stopped, the thread started again, recovery from the WAL);
//   - the same write once the read finished on its own, without a budget (what a write waits without the restart).
//
//   node --import tsx bench/read-restart.ts [--rows 300000] [--budget 1000] [--sleep 20]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { openStore, type Store } from '../src/db/store.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '300000' },
    budget: { type: 'string', default: '1000' },
    sleep: { type: 'string', default: '20' },
  },
});
const rows = Number(values.rows);
const budgetMs = Number(values.budget);
const sleepSeconds = Number(values.sleep);

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-restart-'));
const ms = (from: number) => Math.round(performance.now() - from);
let n = 0;
const write = async (store: Store) => {
  const started = performance.now();
  await store.sql.transaction((tx) => tx.query('INSERT INTO bench_writes VALUES ($1)', [++n]));
  return ms(started);
};
const du = (dir: string): number =>
  fs.readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const at = path.join(dir, entry.name);
    return sum + (entry.isDirectory() ? du(at) : entry.isFile() ? fs.statSync(at).size : 0);
  }, 0);

try {
  let store = await openStore({ dataDir, readBudgetMs: budgetMs });
  await store.sql.exec(`CREATE TABLE bench_rows (id int PRIMARY KEY, payload text);
    CREATE TABLE bench_writes (id int PRIMARY KEY)`);
  for (let from = 0; from < rows; from += 50_000)
    await store.sql.query(
      `INSERT INTO bench_rows SELECT i, repeat(md5(i::text), 3) FROM generate_series($1::int, $2::int) i`,
      [from + 1, Math.min(rows, from + 50_000)],
    );
  await store.sql.exec('CHECKPOINT');
  const quiet = [];
  for (let i = 0; i < 5; i++) quiet.push(await write(store));

  await store.close();
  let started = performance.now();
  store = await openStore({ dataDir, readBudgetMs: budgetMs });
  const cleanOpen = ms(started);
  // rows written since the last checkpoint, as a live store has: the restart replays them from the WAL
  await store.sql.query(`UPDATE bench_rows SET payload = payload || 'x' WHERE id % 10 = 0`);

  started = performance.now();
  const read = store.reads.query(`SELECT pg_sleep(${sleepSeconds})`).then(
    () => ms(started),
    () => ms(started),
  );
  await new Promise((resolve) => setTimeout(resolve, 100));
  const writeWhileReading = write(store).then(() => ms(started));
  const [answered, committed] = await Promise.all([read, writeWhileReading]);
  const afterRestart = await write(store);
  await store.close();

  // without a budget the write waits for the whole read
  store = await openStore({ dataDir, readBudgetMs: (sleepSeconds + 30) * 1000 });
  started = performance.now();
  const whole = store.reads.query(`SELECT pg_sleep(${sleepSeconds})`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const unbudgeted = await write(store).then(() => ms(started));
  await whole;
  await store.close();

  const median = [...quiet].sort((a, b) => a - b)[2]!;
  console.log(`data directory: ${(du(path.join(dataDir, 'pgdata')) / 1024 ** 2).toFixed(0)} MB, ${rows} rows`);
  console.log(`quiet write (median of 5):                      ${median} ms`);
  console.log(`clean open of the store:                        ${cleanOpen} ms`);
  console.log(`read of ${sleepSeconds} s, budget ${budgetMs} ms, caller answered after: ${answered} ms`);
  console.log(
    `write sent during it, committed after:          ${committed} ms (${(committed / cleanOpen).toFixed(2)} × a clean open)`,
  );
  console.log(`write on the restarted thread:                  ${afterRestart} ms`);
  console.log(`same write without a budget, committed after:   ${unbudgeted} ms`);
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}

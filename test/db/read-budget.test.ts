// Reads cannot starve the service: on both stores a read past its time budget is answered with the clear error
// within it, the statements of the loader and the control plane sent meanwhile do not wait for the read to end, and
// reads beyond the queue are refused at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_READ_CONNECTIONS } from '../../src/config.ts';
import { ReadBudgetError } from '../../src/db/read-budget.ts';
import type { Store } from '../../src/db/store.ts';
import { STORE_BACKENDS } from '../helpers/stores.ts';

const BUDGET_MS = 500;
/** the slow read: far longer than anything the test waits for */
const SLOW_READ = 'SELECT pg_sleep(60)';
/** a slow machine's margin over the budget for the caller's answer */
const ANSWER_MARGIN_MS = 1_000;
/**
 * On the embedded store a commit sent during the slow read waits for its budget and for PGlite's thread to start
 * again (seconds, see bench/read-restart.ts); never for the read's minute.
 */
const COMMIT_WAIT_MS = { embedded: 30_000, server: BUDGET_MS } as const;

const since = (started: number) => performance.now() - started;
const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error,
  );

describe.each(STORE_BACKENDS)('reads within their budget on $name', ({ open }) => {
  let store: Store;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ store, cleanup } = await open({ readBudgetMs: BUDGET_MS, readQueueLimit: 2 }));
    await store.sql.exec('CREATE TABLE budget_check (id int PRIMARY KEY)');
    await store.sql.query('INSERT INTO budget_check VALUES (1)');
  });
  afterAll(() => cleanup?.());

  it('answers a slow read with the clear error within its budget, and commits sent meanwhile go through', async () => {
    const started = performance.now();
    const read = caught(store.reads.query(SLOW_READ)).then((error) => ({ error, after: since(started) }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    // what the loader and the control plane do while the read runs: a commit, a token-like lookup
    const commit = store.sql
      .transaction((tx) => tx.query('INSERT INTO budget_check VALUES (2)'))
      .then(() => since(started));
    const lookup = store.prisma.setting.findUnique({ where: { key: 'budget_check' } }).then(() => since(started));

    const { error, after } = await read;
    expect(error).toBeInstanceOf(ReadBudgetError);
    expect((error as Error).message).toBe('This query took longer than 0.5 s; try a shorter period or fewer filters.');
    expect(after).toBeLessThan(BUDGET_MS + ANSWER_MARGIN_MS);
    const [committed, looked] = await Promise.all([commit, lookup]);
    expect(committed).toBeLessThan(COMMIT_WAIT_MS[store.kind]);
    expect(looked).toBeLessThan(COMMIT_WAIT_MS[store.kind]);
    // every committed row is there, and reads answer again
    expect(await store.reads.query('SELECT id FROM budget_check ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('gives up a slow read without cutting a transaction open meanwhile', async () => {
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const transaction = store.sql.transaction(async (tx) => {
      await tx.query('INSERT INTO budget_check VALUES (3)');
      await held;
      await tx.query('INSERT INTO budget_check VALUES (4)');
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const read = await caught(store.reads.query(SLOW_READ));
    expect(read).toBeInstanceOf(ReadBudgetError);
    finish();
    await transaction;
    // the embedded store's read waited for the transaction and was given up unrun; a server ran it beside it
    expect(await store.reads.query('SELECT id FROM budget_check WHERE id > 2 ORDER BY id')).toEqual([
      { id: 3 },
      { id: 4 },
    ]);
  });

  it('refuses a read at once when as many reads wait as the store lets wait', async () => {
    // one read runs (the embedded store's thread, or the server's one read connection by default) and two wait
    const running = store.kind === 'embedded' ? 1 : DEFAULT_READ_CONNECTIONS;
    let givenUp = 0;
    const waiting = Array.from({ length: running + 2 }, () =>
      caught(store.reads.query(SLOW_READ)).finally(() => givenUp++),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = await caught(store.reads.query('SELECT 1'));
    // at once: before any read ahead of it was given up at its budget
    expect(givenUp, 'reads given up before the refusal').toBe(0);
    expect(refused).toBeInstanceOf(ReadBudgetError);
    expect(refused).toMatchObject({ reason: 'busy' });
    for (const error of await Promise.all(waiting)) expect(error).toBeInstanceOf(ReadBudgetError);
    // the queue drains: a read answers again once the slow ones were given up
    await expect.poll(() => caught(store.reads.query('SELECT 1')), { timeout: 60_000, interval: 500 }).toBeNull();
  });
});

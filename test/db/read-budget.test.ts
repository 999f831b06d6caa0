// Reads cannot starve the service: on both stores a read past its time budget is answered with the clear error
// instead of running on, the statements of the loader and the control plane sent meanwhile do not wait for the read
// to end, and reads beyond the queue are refused at once. How soon is measured by bench/read-restart.ts.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_READ_CONNECTIONS } from '../../src/platform/config.ts';
import { ReadBudgetError } from '../../src/db/read-budget.ts';
import type { Store } from '../../src/db/store.ts';
import { STORE_BACKEND, statementRuns } from '../helpers/stores.ts';

const BUDGET_MS = 500;
/**
 * the slow read: longer than the test's timeout, so a test that gets its answer (or its commit through) got it
 * because the budget gave the read up, not because the read ended
 */
const SLOW_READ = 'SELECT pg_sleep(3600)';
/**
 * a budget no read reaches before the refusal that must come before any give-up (the refusal is asked right after the
 * reads, so seconds are margin on a loaded machine); the test then waits it out for the queued reads' errors
 */
const PATIENT_BUDGET_MS = 10_000;

/** a table of the test's own, so no test sees another's rows */
async function freshTable(store: Store): Promise<string> {
  const name = `budget_check_${crypto.randomUUID().slice(0, 8)}`;
  await store.sql.exec(`CREATE TABLE ${name} (id int PRIMARY KEY)`);
  await store.sql.query(`INSERT INTO ${name} VALUES (1)`);
  return name;
}

const caught = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error,
  );

describe(`reads within their budget on ${STORE_BACKEND.name}`, () => {
  let store: Store;
  let cleanup: () => Promise<void>;

  beforeAll(async () => {
    ({ store, cleanup } = await STORE_BACKEND.open({ readBudgetMs: BUDGET_MS, readQueueLimit: 2 }));
  });
  afterAll(() => cleanup?.());

  it('answers a slow read with the clear error, and commits sent meanwhile go through before the read would end', async () => {
    const table = await freshTable(store);
    let givenUp = false;
    const read = caught(store.reads.query(SLOW_READ)).finally(() => (givenUp = true));
    // it runs (on a loaded machine its budget may end it before a look sees it run)
    await expect
      .poll(async () => givenUp || (await statementRuns(store, SLOW_READ)), {
        timeout: 30_000,
        message: 'the slow read runs',
      })
      .toBe(true);
    // what the loader and the control plane do while the read runs: a commit, a token-like lookup; both return long
    // before the read would end (the embedded store's after the budget and a restart of PGlite's thread)
    const commit = store.sql.transaction((tx) => tx.query(`INSERT INTO ${table} VALUES (2)`));
    const lookup = store.prisma.setting.findUnique({ where: { key: table } });

    const error = await read;
    expect(error).toBeInstanceOf(ReadBudgetError);
    expect((error as Error).message).toBe('This query took longer than 0.5 s; try a shorter period or fewer filters.');
    await Promise.all([commit, lookup]);
    // every committed row is there, and reads answer again
    expect(await store.reads.query(`SELECT id FROM ${table} ORDER BY id`)).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it('gives up a slow read without cutting a transaction open meanwhile', async () => {
    const table = await freshTable(store);
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    let open = false;
    const transaction = store.sql.transaction(async (tx) => {
      await tx.query(`INSERT INTO ${table} VALUES (3)`);
      open = true;
      await held;
      await tx.query(`INSERT INTO ${table} VALUES (4)`);
    });
    await expect.poll(() => open, { timeout: 30_000, message: 'the transaction wrote its first row' }).toBe(true);
    const read = await caught(store.reads.query(SLOW_READ));
    expect(read).toBeInstanceOf(ReadBudgetError);
    finish();
    await transaction;
    // the embedded store's read waited for the transaction and was given up unrun; a server ran it beside it
    expect(await store.reads.query(`SELECT id FROM ${table} WHERE id > 2 ORDER BY id`)).toEqual([{ id: 3 }, { id: 4 }]);
  });

  it('refuses a read at once when as many reads wait as the store lets wait', async () => {
    // a store of its own whose budget no read reaches before the refusal, however slow the machine
    const patient = await STORE_BACKEND.open({ readBudgetMs: PATIENT_BUDGET_MS, readQueueLimit: 2 });
    try {
      const { store } = patient;
      // one read runs (the embedded store's thread, or the server's one read connection by default) and two wait
      const running = store.kind === 'embedded' ? 1 : DEFAULT_READ_CONNECTIONS;
      let givenUp = 0;
      // each takes its place (the slot it runs in, or one in the queue) as it is asked
      const waiting = Array.from({ length: running + 2 }, () =>
        caught(store.reads.query(SLOW_READ)).finally(() => givenUp++),
      );
      const refused = await caught(store.reads.query('SELECT 1'));
      // at once: before any read ahead of it was given up at its budget
      expect(givenUp, 'reads given up before the refusal').toBe(0);
      expect(refused).toBeInstanceOf(ReadBudgetError);
      expect(refused).toMatchObject({ reason: 'busy' });
      for (const error of await Promise.all(waiting)) expect(error).toBeInstanceOf(ReadBudgetError);
      // the queue drains: a read answers again once the slow ones were given up
      await expect
        .poll(() => caught(store.reads.query('SELECT 1')), {
          timeout: 120_000,
          interval: 500,
          message: 'a read answers again once the slow reads were given up',
        })
        .toBeNull();
    } finally {
      await patient.cleanup();
    }
  });
});

// Group commit: requests arriving during a commit share the next one, a commit is cut at its event and
// byte budgets, and waiting work beyond its budget is refused at once instead of growing memory.
import { describe, expect, it } from 'vitest';
import {
  GroupCommitWriter,
  OverloadedError,
  StoreUnavailableError,
  type BatchStore,
} from '../../bench/lib/group-commit.ts';

/** resolves after the current event-loop turn: lets the writer cut and start its next commit */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** a store whose commits wait until released; it records the rows of each commit */
function heldStore() {
  const commits: string[][] = [];
  const releases: (() => void)[] = [];
  const store: BatchStore<string> = {
    insert(rows) {
      commits.push(rows);
      return new Promise((resolve) => releases.push(() => resolve(rows.length)));
    },
  };
  /** releases commits, those started meanwhile too, until none has started for a few event-loop turns */
  const releaseAll = async () => {
    for (let quietTurns = 0; quietTurns < 5; ) {
      const release = releases.shift();
      if (release) {
        release();
        quietTurns = 0;
      } else quietTurns++;
      await nextTurn();
    }
  };
  return { store, commits, releaseAll, started: nextTurn };
}

const MB = 1024 * 1024;

describe('group commit writer', () => {
  it('commits the requests that arrived during a commit together, and answers each after its commit', async () => {
    const { store, commits, releaseAll, started } = heldStore();
    const writer = new GroupCommitWriter(store);
    const answered: string[] = [];
    const first = writer.submit(['a']).then(() => answered.push('a'));
    await started();
    const rest = ['b', 'c', 'd'].map((row) => writer.submit([row]).then(() => answered.push(row)));
    await started();
    expect(answered).toEqual([]);
    await releaseAll();
    await Promise.all([first, ...rest]);
    expect(commits).toEqual([['a'], ['b', 'c', 'd']]);
    expect(answered).toEqual(['a', 'b', 'c', 'd']);
  });

  it('cuts a commit at its byte budget; a request larger than the budget is committed alone', async () => {
    const { store, commits, releaseAll, started } = heldStore();
    const writer = new GroupCommitWriter(store, { maxBatchBytes: 2.5 * MB });
    const done = [writer.submit(['first'], 10)];
    await started();
    done.push(
      ...['1', '2', '3', '4', '5'].map((row) => writer.submit([row], MB)),
      writer.submit(['huge'], 3 * MB),
      writer.submit(['small'], 10),
    );
    await releaseAll();
    await Promise.all(done);
    expect(commits).toEqual([['first'], ['1', '2'], ['3', '4'], ['5'], ['huge'], ['small']]);
  });

  it('refuses at once what would exceed the bytes waiting, and accepts again once they are committed', async () => {
    const { store, releaseAll, started } = heldStore();
    const writer = new GroupCommitWriter(store, { maxPendingBytes: 3 * MB });
    const waiting = [writer.submit(['a'], 2 * MB)];
    await started();
    waiting.push(writer.submit(['b'], MB));
    await expect(writer.submit(['c'], 1)).rejects.toBeInstanceOf(OverloadedError);
    await releaseAll();
    await Promise.all(waiting);
    const again = writer.submit(['c'], MB);
    await releaseAll();
    await expect(again).resolves.toBeUndefined();
  });

  it('after the store failed, the requests it refused no longer count against the bytes waiting', async () => {
    let failing = true;
    const store: BatchStore<string> = {
      insert: async (rows) => {
        await nextTurn();
        if (failing) throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
        return rows.length;
      },
    };
    const writer = new GroupCommitWriter(store, { maxPendingBytes: 3 * MB });
    const inFlight = writer.submit(['a'], MB);
    await nextTurn();
    const refused = writer.submit(['b'], 2 * MB);
    await expect(inFlight).rejects.toThrow('connection refused');
    await expect(refused).rejects.toBeInstanceOf(StoreUnavailableError);
    failing = false;
    // the writer refuses at once for a second after a failure, then takes the full budget again
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    await expect(writer.submit(['c'], 3 * MB)).resolves.toBeUndefined();
  });
});

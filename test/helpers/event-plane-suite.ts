// A suite of one rollup's behaviour: the project's store opened before its tests and closed after them, an event
// plane on it, and apps of the suite's own, one per test.
import { afterAll, beforeAll } from 'vitest';
import type { Store } from '../../src/db/store.ts';
import { SqlEventPlane } from '../../src/events/write/event-plane.ts';
import { STORE_BACKEND } from './stores.ts';

export interface EventPlaneSuite {
  /** set before the suite's tests run */
  store: Store;
  plane: SqlEventPlane;
  /** a new app's id, named `${prefix}_N` */
  newApp(): Promise<number>;
}

/** called in a describe block: opens the store in its beforeAll and closes it in its afterAll */
export function eventPlaneSuite(prefix: string): EventPlaneSuite {
  let cleanup: (() => Promise<void>) | undefined;
  let apps = 0;
  const suite = {
    newApp: async () =>
      (
        await suite.store.prisma.app.create({
          data: { appName: `${prefix}_${++apps}`, bot: `@${prefix}_bot`, domains: ['a.example'] },
        })
      ).id,
  } as EventPlaneSuite;
  beforeAll(async () => {
    ({ store: suite.store, cleanup } = await STORE_BACKEND.open());
    suite.plane = new SqlEventPlane(suite.store.sql);
  });
  afterAll(() => cleanup?.());
  return suite;
}

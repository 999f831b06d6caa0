// Test runner settings: the projects "faults" (kills, restarts, fuzz, the hostile corpus, the route walk) and "fast"
// (the rest), both on the embedded store, and "postgres" (the store-level and site API suites again, on PostgreSQL;
// test/store-suites.ts lists them). A project's TEST_STORE is the store its suites open (test/helpers/stores.ts). One
// pool of three workers (on two cores) runs them all; real stores, pages and subprocesses need generous timeouts.
import { defineConfig } from 'vitest/config';
import { available } from './helpers/environment.ts';
import { FAULTS, ON_POSTGRES } from './store-suites.ts';

/** what every project runs with (a project does not inherit the root's test settings) */
const shared = {
  root: '.',
  // a guard against a hang, not a speed check (speed lives in bench/): on a loaded shared machine a test of
  // thousands of calls, several service starts or a store copied while the other worker runs takes minutes
  testTimeout: 600_000,
  hookTimeout: 300_000,
  // a poll waits on a real page, service or store, which a loaded CI machine can keep busy for seconds
  expect: { poll: { timeout: 30_000 } },
  pool: 'forks' as const,
};

export default defineConfig({
  test: {
    ...shared,
    // the projects run in one group whose pool has maxWorkers workers in all (both projects must not set their own):
    // three on two cores, as a suite's files wait on real timers, pages and subprocesses much of their time
    // (docs/benchmarks.md, "npm test")
    maxWorkers: 3,
    // runs once per run, not per project: it builds the SDK and makes the store templates every project copies
    globalSetup: ['./test/global-setup.ts'],
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    projects: [
      {
        test: {
          ...shared,
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: FAULTS,
          env: { TEST_STORE: 'embedded' },
        },
      },
      { test: { ...shared, name: 'faults', include: FAULTS, env: { TEST_STORE: 'embedded' } } },
      // chosen once: without PostgreSQL (outside CI, where it must answer) the project is left out
      ...((await available('PostgreSQL'))
        ? [{ test: { ...shared, name: 'postgres', include: ON_POSTGRES, env: { TEST_STORE: 'postgres' } } }]
        : []),
    ],
  },
});

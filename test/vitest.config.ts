// Test runner settings: real stores, pages and subprocesses need generous timeouts; two cores, two workers.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: '.',
    include: ['test/**/*.test.ts'],
    globalSetup: ['./test/global-setup.ts'],
    // a guard against a hang, not a speed check (speed lives in bench/): on a slow shared machine a test of
    // thousands of calls or dozens of CLI runs takes more than a minute while the other worker runs
    testTimeout: 180_000,
    hookTimeout: 90_000,
    // a poll waits on a real page, service or store, which a loaded CI machine can keep busy for seconds
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});

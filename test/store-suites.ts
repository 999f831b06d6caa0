// Which suites run on which store: the lists test/vitest.config.ts builds its projects from, read as well by the check
// that every suite opening a store is in one of them (test/structure/store-projects.test.ts).

/** kills, restarts, outages, full disks and fuzz: the project "faults", on the embedded store */
export const FAULTS = ['test/faults/**/*.test.ts', 'test/log/crash.test.ts', 'test/log/strace-durability.test.ts'];

/**
 * the site API suites that run on PostgreSQL too, in the project "postgres" (TEST_STORE picks the store in
 * test/site/api-harness.ts); the Chromium suites drive the same pages on the embedded store only
 */
export const SITE_API_ON_POSTGRES = [
  'alerts',
  'apps',
  'dashboard',
  'data-controls',
  'freshness',
  'funnels',
  'launches',
  'login-links',
  'read-keys',
  'roles',
  'sessions',
  'share',
  'sign-in',
].map((part) => `test/site/api-${part}.test.ts`);

/**
 * the store-level suites: each opens the store its project asks for (STORE_BACKEND, SERVICE_BACKEND, BARE_BACKEND of
 * test/helpers/stores.ts), the embedded one in "fast" and PostgreSQL in "postgres"
 */
export const STORE_SUITES = [
  'test/db/migrate.test.ts',
  'test/db/migrations.test.ts',
  'test/db/planner-statistics.test.ts',
  'test/db/read-budget.test.ts',
  'test/db/table-maintenance.test.ts',
  'test/events/lifecycle/data-controls.test.ts',
  'test/events/lifecycle/erasure-texts.test.ts',
  'test/events/lifecycle/erasure-watch.test.ts',
  'test/events/read/insights.test.ts',
  'test/events/request/any-valid-event.test.ts',
  'test/events/write/funnel-postings-rollup.test.ts',
  'test/events/write/launches-rollup.test.ts',
  'test/events/write/loader.test.ts',
  'test/events/write/store.contract.test.ts',
  'test/ingest/healthz-state.test.ts',
  'test/ingest/launch-checks.test.ts',
  'test/ingest/server-keys.test.ts',
  'test/ranking/flood.test.ts',
  'test/ranking/ranking.test.ts',
  'test/read-api/read-api.test.ts',
  'test/read-api/read-budget.test.ts',
  'test/read-api/revenue.test.ts',
  'test/tokens/credential-screen.test.ts',
  'test/tokens/key-makers.test.ts',
  'test/tokens/read-keys.test.ts',
];

/** what the project "postgres" runs, with TEST_STORE=postgres */
export const ON_POSTGRES = [...SITE_API_ON_POSTGRES, ...STORE_SUITES];

/**
 * the suites that start the site API on the project's store but are left out of the project "postgres", so they run
 * on the embedded store only: listed, so that a suite is left out by a decision and never by an oversight
 */
export const ON_EMBEDDED_ONLY = [
  // Chromium drives the pages whose API the site API suites above check on both stores
  'test/site/browser-data-controls.test.ts',
  'test/site/browser-incomplete.test.ts',
  'test/site/browser-mini-app.test.ts',
  'test/site/browser-overview.test.ts',
  'test/site/browser-revenue.test.ts',
  'test/site/browser-share.test.ts',
  'test/site/browser-team.test.ts',
  // npm installs the package the service serves, and a grammY bot sends through it: a check of the package
  'test/grammy-middleware/package-install.test.ts',
  // what the site answers at its edge: headers, parameters, origins
  'test/site/api-bad-parameters.test.ts',
  'test/site/api-csrf-cors.test.ts',
  'test/site/api-security-headers.test.ts',
];

// The site API's cases for the data controls (retention, erasing a user) on PostgreSQL; test/site/api-data-controls.test.ts runs them on the embedded store.
import { casesOnPostgres } from '../api-harness.ts';

await casesOnPostgres(() => import('../api-data-controls.test.ts'));

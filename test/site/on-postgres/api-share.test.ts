// The site API's cases for the public dashboard link on PostgreSQL; test/site/api-share.test.ts runs them on the embedded store.
import { casesOnPostgres } from '../api-harness.ts';

await casesOnPostgres(() => import('../api-share.test.ts'));

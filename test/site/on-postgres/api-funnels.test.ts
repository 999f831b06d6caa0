// The site API's cases for saved funnels on PostgreSQL; test/site/api-funnels.test.ts runs them on the embedded store.
import { casesOnPostgres } from '../api-harness.ts';

await casesOnPostgres(() => import('../api-funnels.test.ts'));

// The site API's cases for read API keys on PostgreSQL; test/site/api-read-keys.test.ts runs them on the embedded store.
import { casesOnPostgres } from '../api-harness.ts';

await casesOnPostgres(() => import('../api-read-keys.test.ts'));

// The site API's cases for sign-in (Login Widget, Mini App initData) on PostgreSQL; test/site/api-sign-in.test.ts runs them on the embedded store.
import { casesOnPostgres } from '../api-harness.ts';

await casesOnPostgres(() => import('../api-sign-in.test.ts'));

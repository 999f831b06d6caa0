// The site API's cases for launches Telegram signed on PostgreSQL; test/site/api-launches.test.ts runs them on the embedded store.
import { casesOnPostgres } from '../api-harness.ts';

await casesOnPostgres(() => import('../api-launches.test.ts'));

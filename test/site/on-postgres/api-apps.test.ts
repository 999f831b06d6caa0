// The site API's cases for the Analytics section's apps, tokens and domains on PostgreSQL; test/site/api-apps.test.ts runs them on the embedded store.
import { casesOnPostgres } from '../api-harness.ts';

await casesOnPostgres(() => import('../api-apps.test.ts'));

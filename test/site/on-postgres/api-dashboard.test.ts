// The site API's cases for the dashboard's data, filters, insights and exports on PostgreSQL; test/site/api-dashboard.test.ts runs them on the embedded store.
import { casesOnPostgres } from '../api-harness.ts';

await casesOnPostgres(() => import('../api-dashboard.test.ts'));

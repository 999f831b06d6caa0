// The site API's cases for the team's roles (owner, editor, viewer, administrator) on PostgreSQL; test/site/api-roles.test.ts runs them on the embedded store.
import { casesOnPostgres } from '../api-harness.ts';

await casesOnPostgres(() => import('../api-roles.test.ts'));

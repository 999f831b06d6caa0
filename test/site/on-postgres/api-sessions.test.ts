// The site API's cases for sessions that end (sign-out, the administrator's end of a user's sessions) on PostgreSQL; test/site/api-sessions.test.ts runs them on the embedded store.
import { casesOnPostgres } from '../api-harness.ts';

await casesOnPostgres(() => import('../api-sessions.test.ts'));

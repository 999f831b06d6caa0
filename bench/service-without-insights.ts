// The service as src/main.ts starts it, but with an event store that keeps no insights' aggregates (users' launch
// attributes, wallet users, custom events and their bits) and without the funnels' events index: the reference
// the insights load bench measures the service's sustained ingest against, on either store.
import { loadConfig } from '../src/config.ts';
import { openStore } from '../src/db/store.ts';
import { startOrExit } from '../src/start.ts';

// the store is migrated by its first opening; the index goes before the service opens it for good
const store = await openStore(loadConfig());
await store.sql.exec('DROP INDEX IF EXISTS events_app_id_step_name_day_idx');
await store.close();
startOrExit({ events: { insights: false } });

// The service as src/main.ts starts it, but with an event plane that keeps no insights' aggregates (users' launch
// attributes, wallet users, custom events and their bits) and no funnel postings or custom events' counts, which its
// ingest does not write:
// the reference the insights load bench measures the service's sustained ingest against, on either store.
import { startOrExit } from '../src/app/start.ts';

startOrExit({ events: { insights: false } });

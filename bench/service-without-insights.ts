// The service as src/main.ts starts it, but with an event store that keeps no insights' aggregates (users' launch
// attributes, wallet users, custom events and their bits, the funnels' events index is dropped by the bench): the
// reference the insights load bench measures the service's sustained ingest against.
import { startOrExit } from '../src/start.ts';

startOrExit({ events: { insights: false } });

// The service's entry point: `npm start` runs its build (dist/server/main.js), `npm run dev` this file through tsx.
import './platform/stack-traces.ts';
import { startOrExit } from './app/start.ts';

startOrExit();

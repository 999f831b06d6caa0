// The service's entry point: `npm start` runs its build (dist/server/main.js), `npm run dev` this file through tsx.
import './stack-traces.ts';
import { startOrExit } from './start.ts';

startOrExit();

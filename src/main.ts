// The service's entry point: `npm start` runs its build (dist/server/main.js), `npm run dev` this file through tsx.
import { startOrExit } from './start.ts';

startOrExit();

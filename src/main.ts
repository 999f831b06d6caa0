// The service's entry point: `npm start` (node --import tsx src/main.ts).
import { startOrExit } from './start.ts';

startOrExit();

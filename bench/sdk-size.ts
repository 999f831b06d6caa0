// Size of the SDK script served at GET /index.js: builds it (src/build/build-sdk.ts) and prints the minified
// and gzip sizes, as one JSON line and one readable line. Exits 1 when gzip exceeds the 4 KB budget.
//   node --import tsx bench/sdk-size.ts
import fs from 'node:fs';
import zlib from 'node:zlib';
import { buildSdk, SDK_SCRIPT } from '../src/build/build-sdk.ts';

const GZIP_BUDGET_BYTES = 4096;

await buildSdk();
const script = fs.readFileSync(SDK_SCRIPT);
// level 9, as the service compresses it (src/sdk-serving/script-route.ts)
const gzip = zlib.gzipSync(script, { level: 9 }).length;
const brotli = zlib.brotliCompressSync(script, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }).length;
const result = {
  file: 'dist/sdk/index.js',
  minifiedBytes: script.length,
  gzipBytes: gzip,
  brotliBytes: brotli,
  gzipBudgetBytes: GZIP_BUDGET_BYTES,
  withinBudget: gzip <= GZIP_BUDGET_BYTES,
};
console.log(JSON.stringify(result));
console.log(
  `SDK script: ${script.length} bytes minified, ${gzip} bytes gzip (${((gzip / GZIP_BUDGET_BYTES) * 100).toFixed(0)}% of the ${GZIP_BUDGET_BYTES}-byte budget), ${brotli} bytes brotli`,
);
if (!result.withinBudget) process.exitCode = 1;

// Token-flood bench: what a flood of made-up tokens costs legitimate clients. In one run, on one service:
//   (a) legitimate single-event requests alone, as fast as the service answers them;
//   (b) flood clients alone, as fast as they are answered (what one refusal costs);
//   (c) the same legitimate load while flood clients send the same request rate as (a) achieved, each
//       request with a made-up token of its own ("tma_" + 40 random letters and digits) and a valid body;
//   (d) (a) again: the reference for (c) is the mean of (a) and (d), so a drift of the machine shows;
//   (e) the floor: a bare Fastify handler (bench/baseline-server.ts) answering the flood's requests at max.
// Target: the flood costs the legitimate clients at most 25% of their throughput ((c) ÷ mean of (a) and (d) >= 0.75).
// Prints a table, the target and one JSON document; exits non-zero only when something failed to run.
//
//   node --import tsx bench/flood.ts [--duration 10] [--warmup 3] [--connections 64] [--flood-connections 32]
//        [--store embedded|postgres] [--json-out file]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase } from '../test/helpers/postgres.ts';
import { runCliJson } from '../test/helpers/service-process.ts';
import { singleEventBodies, writeBodyFile } from './lib/bodies.ts';
import { loadGeneratorName, runLoad, type LoadResult } from './lib/loadgen.ts';
import { machineInfo, runBenchMain, startNode, UNLIMITED_SERVICE_SETTINGS } from './lib/processes.ts';
import { formatTable, parseArgs, printSummary, round, target, uptimeLine } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const DURATION = Number(args.get('duration') ?? 10);
const WARMUP = Number(args.get('warmup') ?? 3);
const CONNECTIONS = Number(args.get('connections') ?? 64);
const FLOOD_CONNECTIONS = Number(args.get('flood-connections') ?? 32);
const STORE = args.get('store') ?? 'embedded';
const JSON_OUT = args.get('json-out');
/** a generous upper bound of the service's single-event rate, so a phase never runs out of distinct bodies */
const RATE_CAP = Number(args.get('rate-cap') ?? 25_000);

const APP = 'flood_app';
const DOMAIN = 'flood.example.com';
const TOKEN_HEADER = 'analytics-auth-token';

const log = (message: string) => console.error(`[bench flood ${new Date().toISOString().slice(11, 19)}] ${message}`);
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-flood-'));
const cleanups: (() => Promise<unknown>)[] = [];

const bodyFile = (tag: string, count: number) =>
  writeBodyFile(path.join(work, `${tag}.bin`), singleEventBodies({ appName: APP, tag, count })).file;

function line(name: string, result: LoadResult): (string | number)[] {
  return [
    name,
    round(result.rps, 0),
    round(result.p50Ms, 2),
    round(result.p99Ms, 2),
    result.errorStatus,
    result.transportErrors,
  ];
}

async function main(): Promise<void> {
  const started = new Date();
  log(`load generator: ${loadGeneratorName()}; ${uptimeLine()}; store ${STORE}; ${DURATION} s per phase`);
  const files = {
    warm: bodyFile('fw', RATE_CAP * Math.max(1, WARMUP)),
    alone: bodyFile('fa', RATE_CAP * DURATION),
    together: bodyFile('ft', RATE_CAP * DURATION),
    flood: bodyFile('ff', RATE_CAP * DURATION),
    aloneAgain: bodyFile('fb', RATE_CAP * DURATION),
  };

  const env: Record<string, string> = {
    DATA_DIR: fs.mkdtempSync(path.join(work, 'data-')),
    SECRET: 'flood-bench-secret-'.padEnd(48, 'x'),
    ...UNLIMITED_SERVICE_SETTINGS,
  };
  if (STORE === 'postgres') {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    env.DATABASE_URL = database.url;
  }
  const service = await startNode('src/main.ts', env);
  cleanups.push(() => service.stop());
  const { token } = await runCliJson<{ token: string }>(env, [
    'tokens',
    'create',
    '--bot',
    '@flood_app_bot',
    '--domain',
    DOMAIN,
    '--app-name',
    APP,
  ]);
  const url = `${service.url}/events`;
  const headers = { 'content-type': 'application/json', origin: `https://${DOMAIN}`, [TOKEN_HEADER]: token };
  const legitimate = (bodyFileName: string, durationSec = DURATION) =>
    runLoad({ url, headers, bodyFile: bodyFileName, connections: CONNECTIONS, durationSec });

  if (WARMUP > 0) await legitimate(files.warm, WARMUP);
  const alone = await legitimate(files.alone);
  log(`legitimate alone: ${round(alone.rps, 0)} req/s, p99 ${round(alone.p99Ms)} ms`);
  // what one refusal costs against one legitimate request: the flood alone, as fast as it is answered
  const floodAlone = await runLoad({
    url,
    headers,
    bodyFile: files.flood,
    connections: FLOOD_CONNECTIONS,
    durationSec: DURATION,
    madeUpTokenHeader: TOKEN_HEADER,
  });
  log(`flood alone: ${round(floodAlone.rps, 0)} req/s, p99 ${round(floodAlone.p99Ms)} ms`);
  const floodRate = Math.max(1, Math.round(alone.rps));
  const [together, flood] = await Promise.all([
    legitimate(files.together),
    runLoad({
      url,
      headers,
      bodyFile: files.flood,
      connections: FLOOD_CONNECTIONS,
      durationSec: DURATION,
      rate: floodRate,
      madeUpTokenHeader: TOKEN_HEADER,
    }),
  ]);
  log(
    `legitimate under flood: ${round(together.rps, 0)} req/s, p99 ${round(together.p99Ms)} ms; flood ${round(flood.rps, 0)} req/s`,
  );
  // once more without the flood: on a shared machine the rate drifts, and the mean of the two brackets it
  const aloneAgain = await legitimate(files.aloneAgain);
  log(`legitimate alone again: ${round(aloneAgain.rps, 0)} req/s, p99 ${round(aloneAgain.p99Ms)} ms`);
  for (const [name, result] of [
    ['legitimate alone', alone],
    ['legitimate under flood', together],
    ['legitimate alone again', aloneAgain],
  ] as const) {
    if (result.errorStatus > 0 || result.transportErrors > 0) {
      throw new Error(`${name}: ${result.errorStatus} answers >= 400 and ${result.transportErrors} transport errors`);
    }
  }
  if (flood.errorStatus !== flood.requests)
    throw new Error(`flood: ${flood.requests - flood.errorStatus} made-up tokens were accepted`);

  // the floor of what any refusal costs: a bare Fastify handler answering the same requests as fast as it can
  await service.stop();
  const baseline = await startNode('bench/baseline-server.ts', {});
  cleanups.push(() => baseline.stop());
  const bare = await runLoad({
    url: `${baseline.url}/events`,
    headers,
    bodyFile: files.flood,
    connections: FLOOD_CONNECTIONS,
    durationSec: DURATION,
    madeUpTokenHeader: TOKEN_HEADER,
  });
  log(`bare Fastify, same requests: ${round(bare.rps, 0)} req/s`);

  const withoutFlood = (alone.rps + aloneAgain.rps) / 2;
  const targets = [
    target(
      'legitimate req/s under a same-rate made-up-token flood ÷ without it',
      together.rps / withoutFlood,
      '×',
      '>=',
      0.75,
      `${round(together.rps, 0)} vs ${round(withoutFlood, 0)} req/s (mean of before and after); flood sent ${round(flood.rps, 0)} req/s (asked ${floodRate})`,
    ),
    // if a refusal cost what a bare answer costs, the flood would take this share of the legitimate clients' server time
    target(
      'ceiling for it: 1 − flood rate ÷ bare Fastify answers at max',
      1 - flood.rps / bare.rps,
      '×',
      '>=',
      0.75,
      `a refusal here costs ${round(bare.rps / floodAlone.rps)}× a bare answer (${round(floodAlone.rps, 0)} vs ${round(bare.rps, 0)} answers/s alone)`,
    ),
  ];
  const summary = {
    bench: 'flood',
    date: started.toISOString(),
    machine: machineInfo(),
    loadGenerator: loadGeneratorName(),
    settings: {
      store: STORE,
      durationSec: DURATION,
      connections: CONNECTIONS,
      floodConnections: FLOOD_CONNECTIONS,
      floodRate,
    },
    phases: { alone, floodAlone, together, flood, aloneAgain, bare },
    targets,
  };
  console.log(`\nToken-flood bench — store ${STORE}, ${loadGeneratorName()}\n`);
  console.log(
    formatTable(
      ['phase', 'req/s', 'p50 ms', 'p99 ms', 'answers >= 400', 'transport errors'],
      [
        line('legitimate alone', alone),
        line('flood alone, max (made-up tokens)', floodAlone),
        line('legitimate under flood', together),
        line(`flood @${floodRate}/s (made-up tokens)`, flood),
        line('legitimate alone again', aloneAgain),
        line('bare Fastify, the flood requests, max', bare),
      ],
    ),
  );
  printSummary(summary, targets, JSON_OUT);
}

await runBenchMain(main, cleanups, work);

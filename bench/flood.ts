// Credential-flood bench: what a flood of made-up credentials costs legitimate clients. In one run, on one service:
//   (a) legitimate single-event requests alone, as fast as the service answers them;
//   (b) flood clients alone, as fast as they are answered (what one refusal of a made-up token costs);
//   (c) for each kind of credential, the same legitimate load while flood clients send the same request rate as (a)
//       achieved, each request with a made-up credential of its own: app tokens ("tma_" + 40 letters and digits,
//       POST /events with a valid body), server keys (POST /events, Authorization: Bearer tma_server_…), read keys
//       (GET /api/v1/apps/<app>/summary, Bearer tma_read_…) and public link secrets (GET /api/share/tma_share_…/dashboard);
//   (d) (a) again: the reference for (c) is the mean of (a) and (d), so a drift of the machine shows;
//   (e) the floor of a flood on this machine: the legitimate load while the token flood, at the same rate, goes to a
//       bare Fastify handler (bench/baseline-server.ts) beside the service instead. The flood's load generator, the
//       kernel's loopback and the cheapest possible answer share the two cores with the service as in (c), so (e) is
//       the best any refusal could do here;
//   (f) that bare Fastify handler answering the token flood's requests at max.
// Target: each flood costs the legitimate clients at most 25% of their throughput ((c) ÷ mean of (a) and (d) >= 0.75).
// Prints a table, the target and one JSON document; exits non-zero only when something failed to run.
//
//   node --import tsx bench/flood.ts [--duration 10] [--warmup 15] [--connections 64] [--flood-connections 32]
//        [--store embedded|postgres] [--kinds token,server,read,share] [--cpu-prof dir] [--json-out file]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase } from '../test/helpers/postgres.ts';
import { runCli } from '../test/helpers/service-process.ts';
import { singleEventBodies, writeBodyFile } from './lib/bodies.ts';
import { loadGeneratorName, runLoad, type LoadResult, type LoadSpec } from './lib/loadgen.ts';
import {
  cpuProfileSettings,
  machineInfo,
  runBenchMain,
  startNode,
  UNLIMITED_SERVICE_SETTINGS,
} from './lib/processes.ts';
import { formatTable, parseArgs, printSummary, round, target, uptimeLine } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const DURATION = Number(args.get('duration') ?? 10);
// a new store's tables are analysed and vacuumed often while they grow from empty; the phases measure a grown one
const WARMUP = Number(args.get('warmup') ?? 15);
const CONNECTIONS = Number(args.get('connections') ?? 64);
const FLOOD_CONNECTIONS = Number(args.get('flood-connections') ?? 32);
const STORE = args.get('store') ?? 'embedded';
const JSON_OUT = args.get('json-out');
/** a generous upper bound of the service's single-event rate, so a phase never runs out of distinct bodies */
const RATE_CAP = Number(args.get('rate-cap') ?? 25_000);
const KINDS = (args.get('kinds') ?? 'token,server,read,share').split(',');
/** a directory for the service's CPU profile (node --cpu-prof), written when it stops */
const CPU_PROF = args.get('cpu-prof');

const APP = 'flood_app';
const DOMAIN = 'flood.example.com';
const TOKEN_HEADER = 'analytics-auth-token';
const URL_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-';

/** a credential of the kind's shape (prefix and 32 characters of nanoid's URL alphabet) that nobody issued */
function madeUp(prefix: string): string {
  let value = prefix;
  for (let i = 0; i < 32; i++) value += URL_ALPHABET[Math.floor(Math.random() * URL_ALPHABET.length)];
  return value;
}

/** how each kind's flood request is made (the token flood uses the load generator's own made-up tokens) */
const FLOODS: Record<string, { label: string; request?: LoadSpec['madeUpRequest'] }> = {
  token: { label: 'made-up tokens' },
  server: {
    label: 'made-up server keys',
    request: () => ({
      method: 'POST',
      path: '/events',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${madeUp('tma_server_')}` },
    }),
  },
  read: {
    label: 'made-up read keys',
    request: () => ({
      method: 'GET',
      path: `/api/v1/apps/${APP}/summary`,
      headers: { authorization: `Bearer ${madeUp('tma_read_')}` },
    }),
  },
  share: {
    label: 'made-up share secrets',
    request: () => ({ method: 'GET', path: `/api/share/${madeUp('tma_share_')}/dashboard?days=90`, headers: {} }),
  },
};

/** a CLI command's JSON answer, with as long to answer as a start on a busy machine */
async function runCliJson<T>(env: Record<string, string>, args: string[]): Promise<T> {
  const result = await runCli(env, [...args, '--json'], 180_000);
  if (result.exitCode !== 0) throw new Error(`cli ${args.join(' ')} exited with ${result.exitCode}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

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
    // one file per flood: every legitimate event is new to the store
    together: Object.fromEntries(KINDS.map((kind) => [kind, bodyFile(`ft${kind}`, RATE_CAP * DURATION)])),
    floor: bodyFile('fl', RATE_CAP * DURATION),
    flood: bodyFile('ff', RATE_CAP * DURATION),
    aloneAgain: bodyFile('fb', RATE_CAP * DURATION),
  };

  const env: Record<string, string> = {
    DATA_DIR: fs.mkdtempSync(path.join(work, 'data-')),
    SECRET: 'flood-bench-secret-'.padEnd(48, 'x'),
    ...UNLIMITED_SERVICE_SETTINGS,
    ...cpuProfileSettings(CPU_PROF),
  };
  if (STORE === 'postgres') {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    env.DATABASE_URL = database.url;
  }
  const service = await startNode('src/main.ts', env);
  cleanups.push(() => service.stop());
  const baseline = await startNode('bench/baseline-server.ts', {});
  cleanups.push(() => baseline.stop());
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
  const underFlood: { kind: string; together: LoadResult; flood: LoadResult }[] = [];
  for (const kind of KINDS) {
    const { label, request } = FLOODS[kind]!;
    const [together, flood] = await Promise.all([
      legitimate(files.together[kind]!),
      runLoad({
        url,
        headers,
        bodyFile: files.flood,
        connections: FLOOD_CONNECTIONS,
        durationSec: DURATION,
        rate: floodRate,
        ...(request ? { madeUpRequest: request } : { madeUpTokenHeader: TOKEN_HEADER }),
      }),
    ]);
    log(
      `legitimate under a flood of ${label}: ${round(together.rps, 0)} req/s, p99 ${round(together.p99Ms)} ms; flood ${round(flood.rps, 0)} req/s`,
    );
    underFlood.push({ kind, together, flood });
  }
  // the floor: the same flood, answered by the bare handler beside the service
  const [floorTogether, floorFlood] = await Promise.all([
    legitimate(files.floor),
    runLoad({
      url: `${baseline.url}/events`,
      headers,
      bodyFile: files.flood,
      connections: FLOOD_CONNECTIONS,
      durationSec: DURATION,
      rate: floodRate,
      madeUpTokenHeader: TOKEN_HEADER,
    }),
  ]);
  log(
    `legitimate under a flood sent to a bare Fastify: ${round(floorTogether.rps, 0)} req/s; flood ${round(floorFlood.rps, 0)} req/s`,
  );
  // once more without the flood: on a shared machine the rate drifts, and the mean of the two brackets it
  const aloneAgain = await legitimate(files.aloneAgain);
  log(`legitimate alone again: ${round(aloneAgain.rps, 0)} req/s, p99 ${round(aloneAgain.p99Ms)} ms`);
  for (const [name, result] of [
    ['legitimate alone', alone],
    ...underFlood.map(({ kind, together }) => [`legitimate under the ${kind} flood`, together] as const),
    ['legitimate alone again', aloneAgain],
  ] as const) {
    if (result.errorStatus > 0 || result.transportErrors > 0) {
      throw new Error(`${name}: ${result.errorStatus} answers >= 400 and ${result.transportErrors} transport errors`);
    }
  }
  for (const { kind, flood } of underFlood)
    if (flood.errorStatus !== flood.requests)
      throw new Error(`${kind} flood: ${flood.requests - flood.errorStatus} made-up credentials were accepted`);

  // the floor of what any refusal costs: a bare Fastify handler answering the same requests as fast as it can
  await service.stop();
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
  const quietP99 = (alone.p99Ms + aloneAgain.p99Ms) / 2;
  const tokenFlood = underFlood.find((entry) => entry.kind === 'token')?.flood;
  const targets = [
    ...underFlood.map(({ kind, together, flood }) =>
      target(
        `legitimate req/s under a same-rate flood of ${FLOODS[kind]!.label} ÷ without it`,
        together.rps / withoutFlood,
        '×',
        '>=',
        0.75,
        `${round(together.rps, 0)} vs ${round(withoutFlood, 0)} req/s (mean of before and after); p99 ${round(together.p99Ms)} vs ${round(quietP99)} ms; flood sent ${round(flood.rps, 0)} req/s (asked ${floodRate})`,
      ),
    ),
    // the same flood answered by the cheapest possible handler: what the flood costs on this machine at best
    target(
      'floor for it: legitimate req/s while the flood goes to a bare Fastify beside the service ÷ without it',
      floorTogether.rps / withoutFlood,
      '×',
      '>=',
      0.75,
      `${round(floorTogether.rps, 0)} req/s; flood sent ${round(floorFlood.rps, 0)} req/s (the token flood ${round(tokenFlood?.rps ?? 0, 0)}); a refusal here costs ${round(bare.rps / floodAlone.rps)}× a bare answer (${round(floodAlone.rps, 0)} vs ${round(bare.rps, 0)} answers/s alone)`,
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
    phases: { alone, floodAlone, underFlood, floor: { together: floorTogether, flood: floorFlood }, aloneAgain, bare },
    targets,
  };
  console.log(`\nCredential-flood bench — store ${STORE}, ${loadGeneratorName()}\n`);
  console.log(
    formatTable(
      ['phase', 'req/s', 'p50 ms', 'p99 ms', 'answers >= 400', 'transport errors'],
      [
        line('legitimate alone', alone),
        line('flood alone, max (made-up tokens)', floodAlone),
        ...underFlood.flatMap(({ kind, together, flood }) => [
          line(`legitimate under the ${kind} flood`, together),
          line(`flood @${floodRate}/s (${FLOODS[kind]!.label})`, flood),
        ]),
        line('legitimate under a flood sent to a bare Fastify', floorTogether),
        line(`flood @${floodRate}/s to the bare Fastify`, floorFlood),
        line('legitimate alone again', aloneAgain),
        line('bare Fastify, the flood requests, max', bare),
      ],
    ),
  );
  printSummary(summary, targets, JSON_OUT);
}

await runBenchMain(main, cleanups, work);

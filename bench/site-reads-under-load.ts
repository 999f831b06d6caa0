// Site reads under a saturating ingest load: the latency of the site's /api GETs (a made-up cookie's, the owner's
// overview, and the owner's dashboard, the one that waits for what the app just sent) beside /healthz's, which waits
// for nothing, while the service is quiet and
// while load generators send the official client's 20-event batches as fast as it answers, on the embedded store.
// Prints the medians and 95th percentiles and the ratios loaded ÷ quiet, then one JSON document.
//
//   node --import tsx bench/site-reads-under-load.ts [--sustain 15] [--connections 32] [--samples 40]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCliJson } from '../test/helpers/service-process.ts';
import { officialBatchBodies, writeBodyFile } from './lib/bodies.ts';
import { loadGeneratorName, runLoad } from './lib/loadgen.ts';
import { machineInfo, type NodeProcess, runBenchMain, startNode, UNLIMITED_SERVICE_SETTINGS } from './lib/processes.ts';
import { formatTable, parseArgs, round, uptimeLine } from './lib/report.ts';

const args = parseArgs(process.argv.slice(2));
const SUSTAIN = Number(args.get('sustain') ?? 15);
const CONNECTIONS = Number(args.get('connections') ?? 32);
const SAMPLES = Number(args.get('samples') ?? 40);
const APP = 'site_reads_app';
const DOMAIN = 'site-reads.example.com';
const OWNER = '4242';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-bench-site-reads-'));
const cleanups: (() => Promise<unknown>)[] = [];
const log = (message: string) =>
  console.error(`[bench site-reads ${new Date().toISOString().slice(11, 19)}] ${message}`);

/** the session cookie a one-time login link gives */
async function signIn(service: NodeProcess, env: Record<string, string>): Promise<string> {
  const { url } = await runCliJson<{ url: string }>(env, ['login-link', '--telegram-id', OWNER, '--json']);
  const link = new URL(url);
  const answer = await fetch(`${service.url}${link.pathname}${link.search}`, { redirect: 'manual' });
  const cookie = answer.headers.getSetCookie().find((value) => value.startsWith('tma_session='));
  if (!cookie) throw new Error(`no session from the login link: ${answer.status}`);
  return cookie.split(';')[0]!;
}

interface Read {
  name: string;
  path: string;
  cookie: string;
  status: number;
}

/** each read's latency, each read in a loop of its own (one every 100 ms), until `until` says stop (at least `least` each) */
async function sample(service: NodeProcess, reads: Read[], least: number, until: () => boolean) {
  const times = new Map(reads.map((read) => [read.name, [] as number[]]));
  const busy = new Map(reads.map((read) => [read.name, 0]));
  await Promise.all(
    reads.map(async (read) => {
      for (let round = 0; round < least || !until(); round++) {
        const started = performance.now();
        const answer = await fetch(service.url + read.path, { headers: { cookie: read.cookie } });
        await answer.arrayBuffer();
        // 503: the store's reads are all taken (the page tries again by itself); counted apart
        if (answer.status === 503) busy.set(read.name, busy.get(read.name)! + 1);
        else if (answer.status !== read.status) throw new Error(`${read.name}: ${answer.status}, not ${read.status}`);
        else times.get(read.name)!.push(performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }),
  );
  return { times, busy };
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};

async function main(): Promise<void> {
  log(`${uptimeLine()}; load generator ${loadGeneratorName()}, ${CONNECTIONS} connections for ${SUSTAIN} s`);
  const env = { ...UNLIMITED_SERVICE_SETTINGS, DATA_DIR: path.join(work, 'data') };
  const { token } = await runCliJson<{ token: string }>(env, [
    'tokens',
    'create',
    '--bot',
    '@site_reads_bot',
    '--domain',
    DOMAIN,
    '--app-name',
    APP,
    '--owner',
    OWNER,
    '--json',
  ]);
  const service = await startNode('src/main.ts', env);
  cleanups.push(() => service.stop());
  const owner = await signIn(service, env);
  const reads: Read[] = [
    // the reference: answered from state, never waiting for the store or the loader
    { name: '/healthz (reference)', path: '/healthz', cookie: '', status: 200 },
    {
      name: 'made-up cookie, dashboard (401)',
      path: `/api/apps/${APP}/dashboard?days=7`,
      cookie: 'tma_session=made-up',
      status: 401,
    },
    { name: 'owner, overview', path: `/api/apps/${APP}/overview?days=7`, cookie: owner, status: 200 },
    {
      name: 'owner, dashboard (waits for the app)',
      path: `/api/apps/${APP}/dashboard?days=7`,
      cookie: owner,
      status: 200,
    },
  ];
  const bodyFile = writeBodyFile(
    path.join(work, 'bodies.bin'),
    officialBatchBodies({ appName: APP, tag: 'reads', count: 60_000 }),
  ).file;
  const headers = {
    'content-type': 'application/json',
    'content-encoding': 'gzip',
    origin: `https://${DOMAIN}`,
    'tga-auth-token': token,
  };

  const quiet = await sample(service, reads, SAMPLES, () => true);
  let loading = true;
  const load = runLoad({
    url: `${service.url}/events`,
    headers,
    bodyFile,
    connections: CONNECTIONS,
    durationSec: SUSTAIN,
  }).finally(() => (loading = false));
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  const loaded = await sample(service, reads, 1, () => !loading);
  const ingest = await load;

  const rows = reads.map((read) => {
    const [q, l] = [quiet.times.get(read.name)!, loaded.times.get(read.name)!];
    return {
      read: read.name,
      quietP50: round(quantile(q, 0.5), 1),
      quietP95: round(quantile(q, 0.95), 1),
      loadedP50: round(quantile(l, 0.5), 1),
      loadedP95: round(quantile(l, 0.95), 1),
      samplesLoaded: l.length,
      busyLoaded: loaded.busy.get(read.name)!,
    };
  });
  console.log(
    `ingest while loaded: ${Math.round(ingest.rps)} requests/s (${Math.round(ingest.rps * 20)} events/s), p99 ${round(ingest.p99Ms, 1)} ms`,
  );
  console.log(
    formatTable(
      [
        'read',
        'quiet p50 ms',
        'quiet p95 ms',
        'loaded p50 ms',
        'loaded p95 ms',
        'loaded p50 ÷ quiet p50',
        '503 loaded',
      ],
      rows.map((row) => [
        row.read,
        row.quietP50,
        row.quietP95,
        row.loadedP50,
        row.loadedP95,
        round(row.loadedP50 / row.quietP50, 1),
        `${row.busyLoaded} of ${row.busyLoaded + row.samplesLoaded}`,
      ]),
    ),
  );
  console.log(JSON.stringify({ machine: machineInfo(), ingestRps: ingest.rps, rows }));
}

void runBenchMain(main, cleanups, work);

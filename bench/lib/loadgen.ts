// One load generator for every phase of a bench run: wrk (Debian's wrk 4.x, a C client, so it takes
// little of the machine's CPU from the server) when it is installed, else autocannon. Both send the
// bodies of a body file in turn (every request a distinct body), either as fast as the server answers
// ("max") or paced to a fixed request rate.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { readBodyFile } from './bodies.ts';

export interface LoadSpec {
  url: string;
  headers: Record<string, string>;
  /** a file written by writeBodyFile */
  bodyFile: string;
  connections: number;
  durationSec: number;
  /** requests per second over all connections; unset = as fast as possible */
  rate?: number;
  /** a header that gets a made-up token ("tma_" + 40 random letters and digits) of its own in every request */
  madeUpTokenHeader?: string;
  /**
   * every request made anew by this (a made-up credential of another kind in a header or the path); such loads run
   * on autocannon, whose requests can be built one by one
   */
  madeUpRequest?: () => { method: 'GET' | 'POST'; path: string; headers: Record<string, string> };
}

export interface LoadResult {
  tool: 'wrk' | 'autocannon';
  requests: number;
  durationSec: number;
  rps: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  /** answers with status ≥ 400 */
  errorStatus: number;
  /** connect/read/write errors and timeouts */
  transportErrors: number;
  /** times the body list was used up and restarted (then the store sees duplicates) */
  bodyWraps: number;
}

export function wrkAvailable(): boolean {
  if (process.env.BENCH_LOADGEN === 'autocannon') return false;
  return spawnSync('wrk', ['--version'], { stdio: 'ignore' }).error === undefined;
}

export function loadGeneratorName(): 'wrk' | 'autocannon' {
  return wrkAvailable() ? 'wrk' : 'autocannon';
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  return wrkAvailable() && !spec.madeUpRequest ? runWrk(spec) : runAutocannon(spec);
}

// ---------------------------------------------------------------------------------------------- wrk

// Every thread keeps its share of the bodies as preformatted requests. Pacing (delay) uses the monotonic
// clock through LuaJIT's ffi: each thread hands out send slots `interval` apart; when the server falls
// behind, missed slots are dropped rather than sent as a burst.
const WRK_SCRIPT = `
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clk_id, bench_timespec *tp);
]]
local ts = ffi.new("bench_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts)
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end

local threads = {}
local counter = 0
function setup(thread)
  thread:set("thread_index", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local requests = {}
local index = 0
wraps = 0
local interval = 0
local next_at = 0

local ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
local function made_up_token()
  local chars = {}
  for i = 1, 40 do
    local k = math.random(1, #ALPHABET)
    chars[i] = ALPHABET:sub(k, k)
  end
  return "tma_" .. table.concat(chars)
end

function init(args)
  local file, nthreads, rate, token_header = args[1], tonumber(args[2]), tonumber(args[3]), args[4]
  math.randomseed(os.time() * 1000 + thread_index)
  local f = assert(io.open(file, "rb"))
  local data = f:read("*a")
  f:close()
  local pos, i = 1, 0
  while pos <= #data do
    local b1, b2, b3, b4 = data:byte(pos, pos + 3)
    local len = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
    if i % nthreads == thread_index then
      local headers = nil
      if token_header ~= nil and token_header ~= "" then
        headers = {}
        for name, value in pairs(wrk.headers) do headers[name] = value end
        headers[token_header] = made_up_token()
      end
      requests[#requests + 1] = wrk.format(nil, nil, headers, data:sub(pos + 4, pos + 3 + len))
    end
    pos = pos + 4 + len
    i = i + 1
  end
  data = nil
  if rate > 0 then interval = 1000 * nthreads / rate end
  index = thread_index % #requests
end

function request()
  index = index + 1
  if index > #requests then
    index = 1
    wraps = wraps + 1
  end
  return requests[index]
end

if tonumber(os.getenv("BENCH_PACED") or "0") > 0 then
  function delay()
    local t = now_ms()
    if next_at < t then next_at = t end
    local wait = next_at - t
    next_at = next_at + interval
    return math.floor(wait)
  end
end

function done(summary, latency, requests)
  local w = 0
  for _, thread in ipairs(threads) do w = w + (thread:get("wraps") or 0) end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"wraps":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.status, e.connect, e.read, e.write, e.timeout, w))
end
`;

/** a directory for the Lua scripts of this process, removed when it exits */
let scriptFile: string | undefined;

function wrkScript(headers: Record<string, string>): string {
  if (!scriptFile) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tma-wrk-'));
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
    scriptFile = dir;
  }
  const file = path.join(
    scriptFile,
    `script-${Object.keys(headers).length}-${Math.random().toString(36).slice(2)}.lua`,
  );
  const headerLines = Object.entries(headers)
    .map(([name, value]) => `wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`)
    .join('\n');
  fs.writeFileSync(file, `wrk.method = "POST"\n${headerLines}\n${WRK_SCRIPT}`);
  return file;
}

function runWrk(spec: LoadSpec): Promise<LoadResult> {
  // one wrk thread handles tens of thousands of requests per second: the second core stays with the server
  const threads = Math.min(Number(process.env.BENCH_WRK_THREADS ?? 1), spec.connections);
  const script = wrkScript(spec.headers);
  const args = [
    '-t',
    String(threads),
    '-c',
    String(spec.connections),
    '-d',
    `${spec.durationSec}s`,
    '--timeout',
    '10s',
    '-s',
    script,
    spec.url,
    '--',
    spec.bodyFile,
    String(threads),
    String(spec.rate ?? 0),
    spec.madeUpTokenHeader ?? '',
  ];
  return new Promise((resolve, reject) => {
    const child = spawn('wrk', args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, BENCH_PACED: spec.rate ? '1' : '0' },
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), (spec.durationSec + 120) * 1000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fs.rmSync(script, { force: true });
      const line = out.split('\n').find((entry) => entry.startsWith('BENCH_JSON '));
      if (code !== 0 || !line) return reject(new Error(`wrk exited with ${code}:\n${out}`));
      const r = JSON.parse(line.slice('BENCH_JSON '.length)) as Record<string, number>;
      const durationSec = r.duration_us! / 1e6;
      resolve({
        tool: 'wrk',
        requests: r.requests!,
        durationSec,
        rps: r.requests! / durationSec,
        p50Ms: r.p50! / 1000,
        p90Ms: r.p90! / 1000,
        p99Ms: r.p99! / 1000,
        maxMs: r.max! / 1000,
        errorStatus: r.status!,
        transportErrors: r.connect! + r.read! + r.write! + r.timeout!,
        bodyWraps: r.wraps!,
      });
    });
  });
}

// ---------------------------------------------------------------------------------------- autocannon

const TOKEN_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function madeUpToken(): string {
  let token = 'tma_';
  for (let i = 0; i < 40; i++) token += TOKEN_ALPHABET[Math.floor(Math.random() * TOKEN_ALPHABET.length)];
  return token;
}

async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const bodies = readBodyFile(spec.bodyFile);
  let index = 0;
  let wraps = 0;
  const result = await autocannon({
    url: spec.url,
    method: 'POST',
    connections: spec.connections,
    duration: spec.durationSec,
    timeout: 10,
    ...(spec.rate ? { overallRate: spec.rate } : {}),
    headers: spec.headers,
    requests: [
      {
        setupRequest: (request) => {
          if (index >= bodies.length) {
            index = 0;
            wraps++;
          }
          const body = bodies[index++];
          if (spec.madeUpRequest) {
            const made = spec.madeUpRequest();
            return { ...request, ...made, ...(made.method === 'POST' ? { body } : { body: undefined }) };
          }
          if (!spec.madeUpTokenHeader) return { ...request, body };
          return { ...request, body, headers: { ...spec.headers, [spec.madeUpTokenHeader]: madeUpToken() } };
        },
      },
    ],
  });
  const errorStatus = Object.entries(result.statusCodeStats ?? {})
    .filter(([status]) => Number(status) >= 400)
    .reduce((sum, [, stats]) => sum + (stats.count ?? 0), 0);
  return {
    tool: 'autocannon',
    requests: result.requests.total,
    durationSec: result.duration,
    rps: result.requests.total / result.duration,
    p50Ms: result.latency.p50,
    p90Ms: result.latency.p90,
    p99Ms: result.latency.p99,
    maxMs: result.latency.max,
    errorStatus,
    // autocannon's errors include its timeouts
    transportErrors: result.errors,
    bodyWraps: wraps,
  };
}

// One node of several does a job (polling the bot's updates, sending alerts): it holds a PostgreSQL advisory lock on a
// connection of its own, and loses the job when that connection does. The embedded store has one node by design.
import { named } from './named-sql.ts';
import crypto from 'node:crypto';

export interface Leadership {
  /** resolves when the job is no longer this node's: the lock's connection failed or was released */
  readonly lost: Promise<void>;
  release(): Promise<void>;
}

/** advisory locks of this service are (namespace, job) pairs, apart from anything else using the database */
const LOCK_NAMESPACE = 0x746d61;
/** how often the lock's connection is checked: a connection cut without a reset shows only when used */
const CHECK_EVERY_MS = 5_000;
const CHECK_TIMEOUT_MS = 4_000;

const jobKey = (job: string) => crypto.createHash('sha256').update(job).digest().readInt32BE(0);

/** the embedded store's data directory admits one process: its node always leads, until released */
function soleLeadership(): Leadership {
  let release = () => {};
  const lost = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    lost,
    release: async () => release(),
  };
}

/**
 * Takes the job `job` if no other node holds it: resolves to the leadership, or null when another node leads (or the
 * server cannot be reached). With no server (the embedded store), this node always leads.
 */
export async function tryLeadership(databaseUrl: string | undefined, job: string): Promise<Leadership | null> {
  if (!databaseUrl) return soleLeadership();
  // loaded here: the embedded store never needs PostgreSQL's client
  const { default: pg } = await import('pg');
  const client = new pg.Client({
    connectionString: databaseUrl,
    connectionTimeoutMillis: 3_000,
    keepAlive: true,
    query_timeout: CHECK_TIMEOUT_MS,
  });
  let resolveLost = () => {};
  const lost = new Promise<void>((resolve) => {
    resolveLost = resolve;
  });
  // a failing connection ends the leadership; the error itself only matters to whoever waits for `lost`
  client.on('error', () => resolveLost());
  client.on('end', () => resolveLost());
  try {
    await client.connect();
    const [row] = (
      await client.query<{ held: boolean }>(
        ...named('SELECT pg_try_advisory_lock({{namespace}}, {{job}}) AS held', {
          namespace: LOCK_NAMESPACE,
          job: jobKey(job),
        }),
      )
    ).rows;
    if (!row?.held) {
      await client.end();
      return null;
    }
  } catch {
    await client.end().catch(() => undefined);
    return null;
  }
  const check = setInterval(() => {
    client.query('SELECT 1').catch(() => {
      resolveLost();
      client.end().catch(() => undefined);
    });
  }, CHECK_EVERY_MS);
  check.unref();
  void lost.then(() => clearInterval(check));
  return {
    lost,
    async release() {
      clearInterval(check);
      // ending the session releases its advisory locks
      await client.end().catch(() => undefined);
      resolveLost();
    },
  };
}

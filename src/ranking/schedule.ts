// Recomputes the catalog ranking soon after start and then periodically; never throws, never keeps the process alive.
import type { SqlReader, SqlRunner } from '../db/sql.ts';
import { computeRanking } from './compute.ts';

export const RANKING_EVERY_MS = 15 * 60_000;
/** the first run waits this long, so start-up (migrations, listening) is not slowed down */
export const FIRST_RUN_DELAY_MS = 5_000;

export interface RankingLog {
  info(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface RankingScheduleOptions {
  everyMs?: number;
  /** delay of the first run (default FIRST_RUN_DELAY_MS, capped at everyMs) */
  firstRunMs?: number;
  log: RankingLog;
  /** what the ranking reads, within the read budget (default: the runner) */
  reads?: SqlReader;
}

/** returns a stop function; a run in progress finishes, its errors are no longer logged */
export function startRankingSchedule(sql: SqlRunner, options: RankingScheduleOptions): () => void {
  const everyMs = options.everyMs ?? RANKING_EVERY_MS;
  const { log } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const schedule = (delay: number) => {
    if (stopped) return;
    timer = setTimeout(run, delay);
    timer.unref();
  };

  async function run() {
    const started = performance.now();
    try {
      const apps = await computeRanking(sql, new Date(), options.reads);
      if (!stopped) {
        log.info(
          {
            apps: apps.length,
            ranked: apps.filter((app) => app.rank !== null).length,
            ms: Math.round(performance.now() - started),
          },
          'catalog ranking computed',
        );
      }
    } catch (error) {
      if (!stopped) log.error({ err: error }, 'catalog ranking failed; retrying at the next run');
    }
    // the next run counts from the end of this one, so runs never overlap
    schedule(everyMs);
  }

  schedule(Math.min(options.firstRunMs ?? FIRST_RUN_DELAY_MS, everyMs));
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
  };
}

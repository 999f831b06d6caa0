// The catalog as last computed: app_scores joined with apps, ranked apps by rank, then unranked apps by name; an app
// its owner took out, or whose token was revoked, leaves it at once.
import type { SqlReader } from '../db/sql.ts';
import { IN_CATALOG, type RankedApp, type ScoreComponents } from './compute.ts';

/** a ranked app as the catalog shows it (unranked: rank null, reason in components.unranked_reason) */
export type CatalogEntry = Omit<RankedApp, 'appId'>;

export interface Catalog {
  /** when the ranking was last computed; null before the first computation */
  computedAt: Date | null;
  apps: CatalogEntry[];
}

export async function readCatalog(sql: Pick<SqlReader, 'query'>): Promise<Catalog> {
  const rows = await sql.query<{
    app_name: string;
    bot: string;
    rank: number | null;
    score: number | null;
    components: ScoreComponents | string;
    computed_at: Date | string;
  }>(
    `SELECT a.app_name, a.bot, s.rank, s.score, s.components, s.computed_at
     FROM app_scores s JOIN apps a ON a.id = s.app_id
     WHERE ${IN_CATALOG}
     ORDER BY s.rank IS NULL, s.rank, a.app_name COLLATE "C"`,
  );
  const apps = rows.map((row) => ({
    appName: row.app_name,
    bot: '' as string | null,
    rank: row.rank,
    score: row.score,
    components: typeof row.components === 'string' ? (JSON.parse(row.components) as ScoreComponents) : row.components,
    computedAt: new Date(row.computed_at),
  }));
  // ranks as shown: one after another among the apps still listed (one taken out since the last computation leaves no gap)
  let rank = 0;
  for (const app of apps) if (app.rank !== null) app.rank = ++rank;
  // an app another app holds its bot from is listed without it
  apps.forEach((app, index) => (app.bot = app.components.bot_listed === false ? null : rows[index]!.bot));
  const computedAt = apps.reduce<Date | null>(
    (latest, app) => (latest && latest >= app.computedAt ? latest : app.computedAt),
    null,
  );
  return { computedAt, apps };
}

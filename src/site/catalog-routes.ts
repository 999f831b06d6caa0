// Public catalog: GET /api/catalog (JSON) and GET /catalog (HTML), both from app_scores as last computed.
import type { FastifyInstance } from 'fastify';
import type { SqlReader } from '../db/sql.ts';
import { describedOnly } from '../platform/described-route.ts';
import { escapeHtml } from '../platform/html.ts';
import { page } from './page-shell.ts';
import { utcTime } from '../platform/time-format.ts';
import { readCatalog, type Catalog, type CatalogEntry } from '../ranking/catalog.ts';
import type { WindowMetrics } from '../ranking/compute.ts';
import { FORMULA, MIN_ACTIVE_USERS_30D, TARGETS, WEIGHTS } from '../ranking/formula.ts';
import { groupedNumber } from '../ranking/number-text.ts';
import { RANKING_EVERY_MS } from '../ranking/schedule.ts';

const CACHE = 'public, max-age=60';

export function botUrl(bot: string): string;
export function botUrl(bot: string | null): string | null;
export function botUrl(bot: string | null): string | null {
  return bot === null ? null : `https://t.me/${encodeURIComponent(bot.replace(/^@/, ''))}`;
}

export function catalogJson(catalog: Catalog) {
  return {
    computed_at: catalog.computedAt?.toISOString() ?? null,
    formula: FORMULA,
    weights: {
      reach: WEIGHTS.reach,
      retention: WEIGHTS.retention,
      engagement: WEIGHTS.engagement,
      wallet_connections: WEIGHTS.walletConnections,
      signed_transactions: WEIGHTS.signedTransactions,
    },
    targets: {
      verified_users: TARGETS.activeUsers,
      events_per_user: TARGETS.eventsPerUser,
      wallet_connections: TARGETS.walletConnections,
      signed_transactions: TARGETS.signedTransactions,
    },
    counts: 'verified',
    min_verified_users_30d: MIN_ACTIVE_USERS_30D,
    apps: catalog.apps.map((app) => ({
      rank: app.rank,
      app_name: app.appName,
      bot: app.bot,
      bot_url: botUrl(app.bot),
      score: app.score,
      verified_users_30d: app.components.window_30d.verified_users,
      unverified_users_30d: app.components.window_30d.unverified_users,
      unranked_reason: app.components.unranked_reason,
      components: app.components,
    })),
  };
}

const percent = (share: number) => `${Math.round(share * 100)}%`;

const HEAD = `<style>
.catalog td{vertical-align:middle}.catalog .app{min-width:9em}.catalog .app strong{display:block}
.catalog .sub{display:block;color:var(--muted);font-size:12px;font-weight:400}
.catalog .rank{font-weight:700;font-size:17px;width:2.5em}
.catalog .score{min-width:84px}.catalog .score .bar-track{margin-top:4px}
.catalog .summary{display:none;color:var(--muted);font-size:13px;margin-top:2px}.catalog .summary span{display:block}
@media (max-width:600px){.catalog .app{overflow-wrap:anywhere}.catalog .summary{display:block}.catalog .score{min-width:64px}}
</style>`;

function cell(value: string, week: string, title: string): string {
  return `<td class="num hide-narrow" title="${escapeHtml(title)}">${value}<span class="sub">7 d: ${week}</span></td>`;
}

function appCell(app: CatalogEntry, summary: string): string {
  const bot = app.bot
    ? `<a href="${escapeHtml(botUrl(app.bot))}" rel="noopener">${escapeHtml(app.bot)}</a>`
    : '<span class="sub">bot listed under another app</span>';
  return `<td class="app"><strong>${escapeHtml(app.appName)}</strong>${bot}${summary}</td>`;
}

function summaryLine(month: WindowMetrics): string {
  return (
    `<div class="summary"><span>30 days: ${groupedNumber(month.verified_users)} verified users · ${percent(month.retention)} returning · ` +
    `${groupedNumber(month.events_per_user, 1)} events/user</span><span>${groupedNumber(month.wallet_connections)} with a wallet · ` +
    `${groupedNumber(month.signed_transactions)} signed a transaction · ${groupedNumber(month.unverified_users)} unverified</span></div>`
  );
}

function rankedRow(app: CatalogEntry): string {
  const month = app.components.window_30d;
  const week = app.components.window_7d;
  const parts = app.components.parts;
  const part = (value: number) => `part ${value.toFixed(2)} of 1`;
  const score = app.score ?? 0;
  return (
    `<tr><td class="num rank">${app.rank}</td>${appCell(app, summaryLine(month))}` +
    `<td class="num score"><strong>${groupedNumber(score, 1)}</strong>` +
    `<div class="bar-track" aria-hidden="true"><div class="bar-fill" style="width:${Math.max(0, Math.min(100, score)).toFixed(1)}%"></div></div></td>` +
    cell(groupedNumber(month.verified_users), groupedNumber(week.verified_users), `reach: ${part(parts.reach)}`) +
    cell(percent(month.retention), percent(week.retention), `retention: ${part(parts.retention)}`) +
    cell(
      groupedNumber(month.events_per_user, 1),
      groupedNumber(week.events_per_user, 1),
      `engagement: ${part(parts.engagement)}`,
    ) +
    cell(
      groupedNumber(month.wallet_connections),
      groupedNumber(week.wallet_connections),
      `wallet connections: ${part(parts.wallet_connections)}`,
    ) +
    cell(
      groupedNumber(month.signed_transactions),
      groupedNumber(week.signed_transactions),
      `signed transactions: ${part(parts.signed_transactions)}`,
    ) +
    `<td class="num hide-narrow muted" title="users whose launches Telegram did not sign: not scored">${groupedNumber(month.unverified_users)}<span class="sub">7 d: ${groupedNumber(week.unverified_users)}</span></td>` +
    `</tr>`
  );
}

function unrankedRow(app: CatalogEntry): string {
  const month = app.components.window_30d;
  return (
    `<tr>${appCell(app, '')}<td class="num">${groupedNumber(month.verified_users)}</td><td class="num muted hide-narrow">${groupedNumber(month.unverified_users)}</td>` +
    `<td>${escapeHtml(app.components.unranked_reason ?? 'Not enough data.')}</td></tr>`
  );
}

function formulaParagraph(): string {
  const w = (value: number) => `${Math.round(value * 100)}%`;
  return (
    `<p>Only <strong>verified</strong> activity counts. Telegram signs every Mini App launch for the app's bot (Ed25519, checkable by anyone ` +
    `with Telegram's public key); a verified user is one whose launch that signature covers, counted on the day Telegram signed it, and a ` +
    `verified session is that launch and the events its page reported. A signature verifies one session only, so a made-up user needs a ` +
    `real Telegram account opening the real bot's Mini App, and the app's own server's word (events sent with a server key) never counts. ` +
    `Users without a verified launch are shown as unverified and not scored; an app is listed while it has verified launches in the last 30 days, ` +
    `and when several apps name one bot, it is listed under the one with the most verified users.</p>` +
    `<p>The score (0–100) adds five parts, each between 0 and 1 and each the mean of its value over the last 7 and the last 30 UTC days, ` +
    `so an app needs recent activity as well as a track record: <strong>reach</strong> (${w(WEIGHTS.reach)}), distinct verified users; ` +
    `<strong>retention</strong> (${w(WEIGHTS.retention)}), the share of verified users with signed launches on two or more different days; ` +
    `<strong>engagement</strong> (${w(WEIGHTS.engagement)}), events of verified sessions per verified user; ` +
    `<strong>wallet connections</strong> (${w(WEIGHTS.walletConnections)}), verified users who completed a TON Connect connection; ` +
    `and <strong>signed transactions</strong> (${w(WEIGHTS.signedTransactions)}), verified users who signed a transaction: one real account moves each by one. ` +
    `Counts are log-scaled against a target, min(1, ln(1+x) / ln(1+target)), with targets of ${groupedNumber(TARGETS.activeUsers)} users, ` +
    `${groupedNumber(TARGETS.eventsPerUser)} events per user, ${groupedNumber(TARGETS.walletConnections)} connections and ` +
    `${groupedNumber(TARGETS.signedTransactions)} transactions: every tenfold growth adds about the same, so a very large app ` +
    `cannot flatten the others and an app's score depends on its own data only. ` +
    `Apps with fewer than ${MIN_ACTIVE_USERS_30D} verified users in 30 days are listed as not ranked; equal scores are ordered by app name. ` +
    `The ranking is recomputed every ${Math.round(RANKING_EVERY_MS / 60_000)} minutes from the daily rollups.</p>`
  );
}

export function catalogHtml(catalog: Catalog): string {
  const ranked = catalog.apps.filter((app) => app.rank !== null);
  const unranked = catalog.apps.filter((app) => app.rank === null);
  const updated = catalog.computedAt
    ? `Updated <time datetime="${catalog.computedAt.toISOString()}">${utcTime(catalog.computedAt)}</time>`
    : 'The ranking has not been computed yet';
  const intro = `<p class="muted">Telegram Mini Apps ranked by how people use them, counting only launches Telegram signed. ${updated} · <a href="/api/catalog">JSON</a></p>`;

  const rankedCard = ranked.length
    ? `<div class="card"><table class="catalog"><thead><tr><th class="num">#</th><th>App</th><th class="num">Score</th>` +
      `<th class="num hide-narrow">Verified users<span class="sub">30 days</span></th><th class="num hide-narrow">Retention<span class="sub">≥ 2 days</span></th>` +
      `<th class="num hide-narrow">Events / user</th><th class="num hide-narrow">Wallet users</th><th class="num hide-narrow">Signed tx<span class="sub">users</span></th>` +
      `<th class="num hide-narrow">Unverified<span class="sub">not scored</span></th></tr></thead>` +
      `<tbody>${ranked.map(rankedRow).join('')}</tbody></table></div>`
    : `<div class="card"><p class="muted">No app has enough verified users to be ranked yet.</p></div>`;

  const unrankedCard = unranked.length
    ? `<div class="card"><h2>Not ranked yet</h2><table class="catalog"><thead><tr><th>App</th><th class="num">Verified users<span class="sub">30 days</span></th><th class="num hide-narrow">Unverified</th><th>Reason</th></tr></thead>` +
      `<tbody>${unranked.map(unrankedRow).join('')}</tbody></table></div>`
    : '';

  const formula = `<div class="card"><h2>How the score works</h2>${formulaParagraph()}</div>`;
  return page({
    title: 'Catalog',
    head: HEAD,
    body: `<h1>App catalog</h1>${intro}${rankedCard}${unrankedCard}${formula}`,
  });
}

/** public routes: no sign-in */
const catalogJsonSchema = {
  summary: 'The public catalog ranking, as last computed',
  response: {
    200: {
      description: 'computed_at, formula, weights, targets, min_verified_users_30d and the apps in rank order',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['computed_at', 'formula', 'weights', 'apps'],
            properties: {
              computed_at: { type: ['string', 'null'] },
              formula: { type: 'string' },
              weights: { type: 'object' },
              targets: { type: 'object' },
              counts: { type: 'string', description: '"verified": only launches Telegram signed are scored' },
              min_verified_users_30d: { type: 'integer' },
              apps: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    rank: { type: ['integer', 'null'] },
                    app_name: { type: 'string' },
                    bot: { type: ['string', 'null'], description: 'null: another app holds this bot' },
                    bot_url: { type: ['string', 'null'] },
                    score: { type: ['number', 'null'] },
                    verified_users_30d: { type: 'integer' },
                    unverified_users_30d: {
                      type: 'integer',
                      description: 'users without a verified launch: not scored',
                    },
                    unranked_reason: { type: ['string', 'null'] },
                    components: { type: 'object' },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};
const catalogPageSchema = {
  summary: 'The public catalog ranking as a page',
  response: { 200: { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } } },
};

export function registerCatalogRoutes(app: FastifyInstance, sql: SqlReader): void {
  app.get('/api/catalog', describedOnly(catalogJsonSchema), async (_request, reply) => {
    const catalog = await readCatalog(sql);
    return reply.header('cache-control', CACHE).send(catalogJson(catalog));
  });
  app.get('/catalog', describedOnly(catalogPageSchema), async (_request, reply) => {
    const catalog = await readCatalog(sql);
    return reply.header('cache-control', CACHE).type('text/html; charset=utf-8').send(catalogHtml(catalog));
  });
}

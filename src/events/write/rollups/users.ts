// Each user's active days (daily_users) and, per app, their first and last day with their first event's launch
// attributes (app_users) and their first completed wallet connection (wallet_users): users, retention, campaigns.
import { CUSTOM_NAME_BITS, NO_CUSTOM_NAMES, OTHER_SLOT, rollupText } from '../../custom-events.ts';
import { beforeFirstKeptDay, defineRollup } from './rollup.ts';
import { REQUEST_SUMMARY } from '../request-summary.ts';

/**
 * An app_users upsert's row (excluded) holds an earlier first event than the stored one (u); a user stored without
 * the time of their first event is compared by day
 */
const EARLIER_FIRST = `(excluded.first_at < u.first_at OR (u.first_at IS NULL AND excluded.first_day < u.first_day))`;

/** without the insights: users keep no launch attributes, and wallet users are not counted */
const WITHOUT_INSIGHTS = `new_users AS (
  INSERT INTO daily_users (app_id, day, user_key)
  SELECT app_id, day, user_key FROM batch_users ORDER BY 1, 2, 3
  ON CONFLICT DO NOTHING RETURNING app_id, day, user_key
), last_seen AS (
  INSERT INTO app_users AS u (app_id, user_key, last_day, first_day)
  SELECT app_id, user_key, max(day), min(day) FROM new_users GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (app_id, user_key) DO UPDATE SET last_day = excluded.last_day WHERE u.last_day < excluded.last_day
)`;

/** with the insights: the names of the users' custom events (name_lists, name_map: the custom events rollup's) */
const WITH_INSIGHTS = `name_bits AS (
  -- each list's names as bits, as text by the app and the list (NULL: no name)
  SELECT jsonb_object_agg(l.app_id || ' ' || l.names,
           (SELECT bit_or(set_bit(${NO_CUSTOM_NAMES}, coalesce(((SELECT slots FROM name_map) ->> (l.app_id || ' ' || n.name))::int, ${OTHER_SLOT}), 1))
            FROM jsonb_array_elements_text(l.names::jsonb) AS n(name))::text) AS bits
  FROM name_lists l
), seen_users AS (
  -- each user's days of the batch, with the names of their custom events as bits (NULL: none)
  INSERT INTO daily_users AS d (app_id, day, user_key, custom_names)
  SELECT app_id, day, user_key, ((SELECT bits FROM name_bits) ->> (b.app_id || ' ' || b.names))::bit(${CUSTOM_NAME_BITS})
  FROM batch_users b ORDER BY app_id, day, user_key
  -- a day already counted gains the names it had not had yet (the conflicting row is locked either way, as the
  -- app's other rollup rows are by every commit for it)
  ON CONFLICT (app_id, day, user_key) DO UPDATE SET custom_names = coalesce(d.custom_names, ${NO_CUSTOM_NAMES}) | excluded.custom_names
  WHERE excluded.custom_names IS NOT NULL
    AND (d.custom_names IS NULL OR d.custom_names | excluded.custom_names <> d.custom_names)
  -- a row the insert made has no xmax; one it updated has the updating transaction's
  RETURNING app_id, day, user_key, xmax = 0 AS fresh
), new_users AS (
  SELECT app_id, day, user_key FROM seen_users WHERE fresh
), user_firsts AS (
  -- each user's first event of the batch, with its launch attributes (cut where they are stored, per user)
  SELECT DISTINCT ON (app_id, user_key) app_id, user_key, day, first_at AS occurred_at, platform, locale, is_premium, start_param
  FROM batch_users ORDER BY app_id, user_key, first_at
), user_changes AS (
  -- per user: the first event of the batch and the last of the days counted for the first time now (or NULL)
  SELECT app_id, user_key, min(first_day) AS first_day, min(first_at) AS first_at, max(platform) AS platform,
         max(locale) AS locale, bool_or(is_premium) AS is_premium, max(start_param) AS start_param,
         max(new_day) AS last_day
  FROM (SELECT app_id, user_key, day AS first_day, occurred_at AS first_at, platform, locale, is_premium, start_param,
               NULL::date AS new_day
        FROM user_firsts
        UNION ALL
        SELECT app_id, user_key, NULL, NULL, NULL, NULL, NULL, NULL, day FROM new_users) AS changes
  GROUP BY 1, 2
), last_seen AS (
  -- a user is first seen with the attributes of their first event, also when it arrives after later ones (a late
  -- event moves their first day, and their cohort, earlier)
  INSERT INTO app_users AS u (app_id, user_key, last_day, first_day, first_at, platform, locale, is_premium, campaign)
  SELECT app_id, user_key, coalesce(last_day, first_day), first_day, first_at, ${rollupText('platform')},
         ${rollupText('locale')}, is_premium, ${rollupText('start_param')}
  FROM user_changes c
  -- users with a day counted for the first time, and all but those this statement's snapshot shows first seen no
  -- later (one probe each; their rows are not locked): a first event only moves earlier, so what the snapshot shows
  -- holds, while a row a concurrent commit adds is not in it and gets to the upsert, which sees it
  WHERE last_day IS NOT NULL
     OR NOT EXISTS (SELECT 1 FROM app_users x WHERE x.app_id = c.app_id AND x.user_key = c.user_key
                    AND (x.first_at <= c.first_at OR (x.first_at IS NULL AND x.first_day <= c.first_day)))
  ORDER BY 1, 2
  ON CONFLICT (app_id, user_key) DO UPDATE SET
    last_day = greatest(u.last_day, excluded.last_day),
    first_day = CASE WHEN ${EARLIER_FIRST} THEN excluded.first_day ELSE u.first_day END,
    first_at = CASE WHEN ${EARLIER_FIRST} THEN excluded.first_at ELSE u.first_at END,
    platform = CASE WHEN ${EARLIER_FIRST} THEN excluded.platform ELSE u.platform END,
    locale = CASE WHEN ${EARLIER_FIRST} THEN excluded.locale ELSE u.locale END,
    is_premium = CASE WHEN ${EARLIER_FIRST} THEN excluded.is_premium ELSE u.is_premium END,
    campaign = CASE WHEN ${EARLIER_FIRST} THEN excluded.campaign ELSE u.campaign END
  WHERE u.last_day < excluded.last_day OR ${EARLIER_FIRST}
), wallets AS (
  INSERT INTO wallet_users AS w (app_id, user_key, first_day)
  SELECT app_id, user_key, min(day) FROM batch_users WHERE wallet GROUP BY 1, 2 ORDER BY 1, 2
  ON CONFLICT (app_id, user_key) DO UPDATE SET first_day = excluded.first_day WHERE w.first_day > excluded.first_day
)`;

export const USERS = defineRollup({
  name: 'users',
  tables: [
    {
      name: 'daily_users',
      keyedBy: 'user',
      retention: { kind: 'deleted', when: [beforeFirstKeptDay('day')] },
      erasure: { kind: 'user', marksCommits: true },
    },
    {
      // a user still active keeps their row, first day included
      name: 'app_users',
      keyedBy: 'user',
      retention: { kind: 'deleted', when: [beforeFirstKeptDay('last_day')] },
      erasure: { kind: 'user' },
    },
    {
      // after app_users: a wallet user is still active exactly when their app_users row remains
      name: 'wallet_users',
      keyedBy: 'user',
      retention: {
        kind: 'deleted',
        when: [
          `${beforeFirstKeptDay('first_day')} AND NOT EXISTS (SELECT 1 FROM app_users u WHERE u.app_id = t.app_id AND u.user_key = t.user_key)`,
        ],
      },
      erasure: { kind: 'user' },
    },
  ],
  sql: (insights) => (insights ? WITH_INSIGHTS : WITHOUT_INSIGHTS),
  preAggregated: REQUEST_SUMMARY,
  reads: ['name_lists', 'name_map'],
  readBy: [
    'src/events/read/dashboard.ts (distinct users)',
    'src/events/read/insights.ts (retention, campaigns, custom event users)',
    'src/ranking/compute.ts',
  ],
});

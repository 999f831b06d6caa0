-- Funnels read their steps' events from postings instead of an index entry per event: per app, step (the event's
-- name, or 'custom-event:' and a custom event's own name) and day, rows of binary entries (the event's time in its
-- day, its key) in chunks of one user's session with the launch attributes the filters compare. The loader writes a
-- few rows per commit (src/events/funnel-postings.ts); here the stored events' postings are made once, in the same
-- bytes. Revenue keeps an index of its own over the payment events alone.

-- CreateTable
CREATE TABLE "funnel_postings" (
    "app_id" INTEGER NOT NULL,
    "step" TEXT COLLATE "C" NOT NULL,
    "day" DATE NOT NULL,
    "id" BIGSERIAL NOT NULL,
    "entries" BYTEA NOT NULL,

    CONSTRAINT "funnel_postings_pkey" PRIMARY KEY ("app_id","step","day","id")
);

-- entries are binary and already compact: kept out of line without compression
ALTER TABLE "funnel_postings" ALTER COLUMN "entries" SET STORAGE EXTERNAL;

-- the stored events' postings (postingsFromEvents in src/events/funnel-postings.ts)
INSERT INTO funnel_postings (app_id, step, day, entries)
SELECT app_id, step, day, string_agg(chunk, ''::bytea)
FROM (
  SELECT app_id, step, day,
         int2send(octet_length(convert_to(platform, 'UTF8'))::int2) || convert_to(platform, 'UTF8') || int2send(octet_length(convert_to(locale, 'UTF8'))::int2) || convert_to(locale, 'UTF8') || int2send(octet_length(convert_to(campaign, 'UTF8'))::int2) || convert_to(campaign, 'UTF8')
           || CASE WHEN is_premium THEN '\x01'::bytea ELSE '\x00'::bytea END || user_key || uuid_send(session_id)
           || int4send(count(*)::int) || string_agg(entry, ''::bytea) AS chunk
  FROM (
    SELECT e.app_id, (CASE WHEN e.event_name = 'custom-event' THEN 'custom-event:' || CASE WHEN jsonb_typeof(e.props->'custom_data'->'name') = 'string' THEN left(e.props->'custom_data'->>'name', 64) ELSE '(no name)' END ELSE e.event_name END) AS step, e.day, left(coalesce(e.platform, ''), 64) AS platform,
           left(coalesce(e.locale, ''), 64) AS locale,
           left(coalesce(e.start_param, ''), 64) AS campaign, e.is_premium, e.user_key, e.session_id,
           int4send(((extract(epoch FROM e.occurred_at) * 1000)::bigint - (e.day - DATE '1970-01-01')::bigint * 86400000)::int)
             || e.event_key AS entry
    FROM events e WHERE true
  ) AS events
  GROUP BY app_id, step, day, platform, locale, campaign, is_premium, user_key, session_id
) AS chunks
GROUP BY app_id, step, day;

-- DropIndex
DROP INDEX "events_app_id_step_name_day_idx";

-- CreateIndex
CREATE INDEX "events_app_id_payment_day_idx" ON "events" ("app_id", "event_name", "day")
    WHERE event_name IN ('purchase-init', 'purchase-success', 'successful-payment', 'refunded-payment');

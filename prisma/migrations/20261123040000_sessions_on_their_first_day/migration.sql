-- A session is counted once, on the first UTC day it was seen. Its rows of later days leave daily_sessions,
-- and those days' session counts and launch dimensions lose what the rows added (rows from before the
-- dimensions were kept have none to give back).
WITH later_days AS (
  DELETE FROM "daily_sessions" s
  USING (SELECT "app_id", "session_id", min("day") AS first_day FROM "daily_sessions" GROUP BY 1, 2 HAVING count(*) > 1) f
  WHERE s."app_id" = f."app_id" AND s."session_id" = f."session_id" AND s."day" > f.first_day
  RETURNING s."app_id", s."day", s."platform", s."locale", s."start_param"
), stats AS (
  UPDATE "daily_app_stats" a SET "sessions" = a."sessions" - r.n
  FROM (SELECT "app_id", "day", count(*)::int AS n FROM later_days GROUP BY 1, 2) r
  WHERE a."app_id" = r."app_id" AND a."day" = r."day"
)
UPDATE "daily_dimensions" d SET "sessions" = d."sessions" - r.n
FROM (SELECT l."app_id", l."day", x.dimension, x.value, count(*) AS n
      FROM later_days l
      CROSS JOIN LATERAL (VALUES ('platform', l."platform"), ('locale', l."locale"), ('start_param', l."start_param")) AS x(dimension, value)
      WHERE x.value IS NOT NULL GROUP BY 1, 2, 3, 4) r
WHERE d."app_id" = r."app_id" AND d."day" = r."day" AND d."dimension" = r.dimension AND d."value" = r.value;

DELETE FROM "daily_dimensions" WHERE "sessions" <= 0;

-- AlterTable
ALTER TABLE "daily_sessions" DROP CONSTRAINT "daily_sessions_pkey",
ADD CONSTRAINT "daily_sessions_pkey" PRIMARY KEY ("app_id", "session_id");

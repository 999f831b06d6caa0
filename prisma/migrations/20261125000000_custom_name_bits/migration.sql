-- A custom event's users are read from the users' own days: each tracked name takes a slot, a bit of
-- daily_users.custom_names (bit 100 of the 128 stands for "(other)"), instead of a row per user and name.

-- AlterTable
ALTER TABLE "custom_catalog" ADD COLUMN "slot" SMALLINT;

-- AlterTable
ALTER TABLE "daily_users" ADD COLUMN "custom_names" BIT(128);

-- Backfill: the names already tracked take slots in name order, up to the 100 an app has (commits at once could
-- leave a few more, which count as "(other)" from now on); level 3 holds each app's next free slot
UPDATE "custom_catalog" c SET "slot" = r."slot"
FROM (SELECT "app_id", "name", (row_number() OVER (PARTITION BY "app_id" ORDER BY "name") - 1)::smallint AS "slot"
      FROM "custom_catalog" WHERE "level" = 0) r
WHERE c."app_id" = r."app_id" AND c."level" = 0 AND c."name" = r."name" AND r."slot" < 100;

INSERT INTO "custom_catalog" ("app_id", "level", "name", "property", "value", "slot")
SELECT "app_id", 3, '', '', '', least(count(*), 100) FROM "custom_catalog" WHERE "level" = 0 GROUP BY "app_id";

-- Backfill: each user's custom event names of each day as bits; "(other)" is bit 100
UPDATE "daily_users" d SET "custom_names" = b."bits"
FROM (SELECT u."app_id", u."day", u."user_key",
             bit_or(set_bit(B'0'::bit(128), coalesce(c."slot", 100), 1)) AS "bits"
      FROM "daily_custom_users" u
      LEFT JOIN "custom_catalog" c ON c."app_id" = u."app_id" AND c."level" = 0 AND c."name" = u."name"
        AND c."property" = '' AND c."value" = ''
      GROUP BY 1, 2, 3) b
WHERE d."app_id" = b."app_id" AND d."day" = b."day" AND d."user_key" = b."user_key";

-- DropTable
DROP TABLE "daily_custom_users";

-- DropTable
DROP TABLE "custom_users";

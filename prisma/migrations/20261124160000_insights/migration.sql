-- AlterTable
ALTER TABLE "app_users" ADD COLUMN     "campaign" TEXT,
ADD COLUMN     "first_day" DATE,
ADD COLUMN     "is_premium" BOOLEAN,
ADD COLUMN     "locale" TEXT,
ADD COLUMN     "platform" TEXT;

-- AlterTable
ALTER TABLE "daily_users" ADD COLUMN     "is_premium" BOOLEAN,
ADD COLUMN     "locale" TEXT,
ADD COLUMN     "platform" TEXT,
ADD COLUMN     "start_param" TEXT;

-- CreateTable
CREATE TABLE "wallet_users" (
    "app_id" INTEGER NOT NULL,
    "user_key" BYTEA NOT NULL,
    "first_day" DATE NOT NULL,

    CONSTRAINT "wallet_users_pkey" PRIMARY KEY ("app_id","user_key")
);

-- CreateTable
CREATE TABLE "custom_catalog" (
    "app_id" INTEGER NOT NULL,
    "level" SMALLINT NOT NULL,
    "name" TEXT NOT NULL,
    "property" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "custom_catalog_pkey" PRIMARY KEY ("app_id","level","name","property","value")
);

-- CreateTable
CREATE TABLE "daily_custom_events" (
    "app_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "name" TEXT NOT NULL,
    "events" BIGINT NOT NULL,

    CONSTRAINT "daily_custom_events_pkey" PRIMARY KEY ("app_id","day","name")
);

-- CreateTable
CREATE TABLE "daily_custom_users" (
    "app_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "name" TEXT NOT NULL,
    "user_key" BYTEA NOT NULL,

    CONSTRAINT "daily_custom_users_pkey" PRIMARY KEY ("app_id","day","name","user_key")
);

-- CreateTable
CREATE TABLE "daily_custom_values" (
    "app_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "name" TEXT NOT NULL,
    "property" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "events" BIGINT NOT NULL,

    CONSTRAINT "daily_custom_values_pkey" PRIMARY KEY ("app_id","day","name","property","value")
);

-- CreateTable
CREATE TABLE "read_keys" (
    "id" SERIAL NOT NULL,
    "app_id" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "read_keys_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "read_keys_hash_key" ON "read_keys"("hash");

-- CreateIndex
CREATE INDEX "read_keys_app_id_idx" ON "read_keys"("app_id");

-- CreateIndex
CREATE INDEX "read_keys_prefix_idx" ON "read_keys"("prefix");

-- CreateIndex
CREATE INDEX "app_users_app_id_first_day_idx" ON "app_users"("app_id", "first_day");

-- AddForeignKey
ALTER TABLE "read_keys" ADD CONSTRAINT "read_keys_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Stored users: their first day from their user-days (their launch attributes were not kept)
UPDATE "app_users" u SET "first_day" = f.first_day
FROM (SELECT "app_id", "user_key", min("day") AS first_day FROM "daily_users" GROUP BY 1, 2) f
WHERE u."app_id" = f."app_id" AND u."user_key" = f."user_key";
UPDATE "app_users" SET "first_day" = "last_day" WHERE "first_day" IS NULL;
ALTER TABLE "app_users" ALTER COLUMN "first_day" SET NOT NULL;

-- Stored wallet connections
INSERT INTO "wallet_users" ("app_id", "user_key", "first_day")
SELECT "app_id", "user_key", min("day") FROM "events" WHERE "event_name" = 'connection-completed' GROUP BY 1, 2;

-- Stored custom events, within the limits of src/events/custom-events.ts (the most frequent names, properties and
-- values first; the rest counted as "(other)")
CREATE TEMP TABLE stored_custom AS
SELECT "app_id", "day", "user_key",
       CASE WHEN jsonb_typeof("props"->'custom_data'->'name') = 'string' THEN left("props"->'custom_data'->>'name', 64) ELSE '(no name)' END AS name,
       CASE WHEN jsonb_typeof("props"->'custom_data') = 'object' THEN "props"->'custom_data' ELSE '{}'::jsonb END AS data
FROM "events" WHERE "event_name" = 'custom-event';

INSERT INTO "custom_catalog" ("app_id", "level", "name", "property", "value")
SELECT "app_id", 0, name, '', '' FROM (
  SELECT "app_id", name, row_number() OVER (PARTITION BY "app_id" ORDER BY count(*) DESC, name) AS place
  FROM stored_custom GROUP BY 1, 2) ranked
WHERE place <= 100;

CREATE TEMP TABLE stored_custom_named AS
SELECT s."app_id", s."day", s."user_key", coalesce(c.name, '(other)') AS name, c.name IS NOT NULL AS tracked, s.data
FROM stored_custom s LEFT JOIN "custom_catalog" c
  ON c."app_id" = s."app_id" AND c."level" = 0 AND c.name = s.name AND c.property = '' AND c.value = '';

INSERT INTO "daily_custom_events" ("app_id", "day", "name", "events")
SELECT "app_id", "day", name, count(*) FROM stored_custom_named GROUP BY 1, 2, 3;
INSERT INTO "daily_custom_users" ("app_id", "day", "name", "user_key")
SELECT DISTINCT "app_id", "day", name, "user_key" FROM stored_custom_named;

CREATE TEMP TABLE stored_custom_pairs AS
SELECT n."app_id", n."day", n.name, left(p.key, 64) AS property,
       left(CASE jsonb_typeof(p.value) WHEN 'string' THEN p.value #>> '{}' ELSE p.value::text END, 64) AS value
FROM stored_custom_named n CROSS JOIN LATERAL jsonb_each(n.data) AS p(key, value)
WHERE n.tracked AND p.key <> 'name' AND jsonb_typeof(p.value) IN ('string', 'number', 'boolean');

INSERT INTO "custom_catalog" ("app_id", "level", "name", "property", "value")
SELECT "app_id", 1, name, property, '' FROM (
  SELECT "app_id", name, property, row_number() OVER (PARTITION BY "app_id", name ORDER BY count(*) DESC, property) AS place
  FROM stored_custom_pairs GROUP BY 1, 2, 3) ranked
WHERE place <= 20;

INSERT INTO "custom_catalog" ("app_id", "level", "name", "property", "value")
SELECT "app_id", 2, name, property, value FROM (
  SELECT p."app_id", p.name, p.property, p.value,
         row_number() OVER (PARTITION BY p."app_id", p.name, p.property ORDER BY count(*) DESC, p.value) AS place
  FROM stored_custom_pairs p
  JOIN "custom_catalog" c ON c."app_id" = p."app_id" AND c."level" = 1 AND c.name = p.name AND c.property = p.property AND c.value = ''
  GROUP BY 1, 2, 3, 4) ranked
WHERE place <= 100;

INSERT INTO "daily_custom_values" ("app_id", "day", "name", "property", "value", "events")
SELECT p."app_id", p."day", p.name, p.property, coalesce(v.value, '(other)'), count(*)
FROM stored_custom_pairs p
JOIN "custom_catalog" c ON c."app_id" = p."app_id" AND c."level" = 1 AND c.name = p.name AND c.property = p.property AND c.value = ''
LEFT JOIN "custom_catalog" v ON v."app_id" = p."app_id" AND v."level" = 2 AND v.name = p.name AND v.property = p.property AND v.value = p.value
GROUP BY 1, 2, 3, 4, 5;

DROP TABLE stored_custom_pairs, stored_custom_named, stored_custom;

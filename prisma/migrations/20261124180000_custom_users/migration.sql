-- CreateTable
CREATE TABLE "custom_users" (
    "app_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "user_key" BYTEA NOT NULL,
    "last_day" DATE NOT NULL,

    CONSTRAINT "custom_users_pkey" PRIMARY KEY ("app_id","name","user_key")
);

-- CreateIndex
CREATE INDEX "custom_users_app_id_last_day_idx" ON "custom_users"("app_id", "last_day");


-- Backfill: each user's last day with each custom event name
INSERT INTO "custom_users" ("app_id", "name", "user_key", "last_day")
SELECT "app_id", "name", "user_key", max("day") FROM "daily_custom_users" GROUP BY 1, 2, 3;

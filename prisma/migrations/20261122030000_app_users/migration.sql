-- CreateTable
CREATE TABLE "app_users" (
    "app_id" INTEGER NOT NULL,
    "user_key" BYTEA NOT NULL,
    "last_day" DATE NOT NULL,

    CONSTRAINT "app_users_pkey" PRIMARY KEY ("app_id","user_key")
);

-- CreateIndex
CREATE INDEX "app_users_app_id_last_day_idx" ON "app_users"("app_id", "last_day");


-- Backfill from the user-days stored so far
INSERT INTO "app_users" ("app_id", "user_key", "last_day")
SELECT "app_id", "user_key", max("day") FROM "daily_users" GROUP BY 1, 2;

-- Launches Telegram signed: each app's bot id, an app-init's verdict on its launch data (never the data itself), the
-- sessions whose launch verified (one signature, one session) and the launches per day and outcome; and the apps a
-- person may own where an administrator raised the limit.
-- AlterTable
ALTER TABLE "apps" ADD COLUMN     "bot_id" BIGINT;

-- AlterTable
ALTER TABLE "events" ADD COLUMN     "launch_check" TEXT,
ADD COLUMN     "launch_day" DATE,
ADD COLUMN     "launch_proof" BYTEA,
ADD COLUMN     "sent_by_server" BOOLEAN;

-- CreateTable
CREATE TABLE "verified_sessions" (
    "app_id" INTEGER NOT NULL,
    "session_id" UUID NOT NULL,
    "day" DATE NOT NULL,
    "user_key" BYTEA NOT NULL,
    "proof" BYTEA NOT NULL,
    "events" BIGINT NOT NULL,
    "wallet_connected" BOOLEAN NOT NULL,
    "transaction_signed" BOOLEAN NOT NULL,

    CONSTRAINT "verified_sessions_pkey" PRIMARY KEY ("app_id","session_id")
);

-- CreateTable
CREATE TABLE "daily_launch_checks" (
    "app_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "outcome" TEXT NOT NULL,
    "launches" BIGINT NOT NULL,

    CONSTRAINT "daily_launch_checks_pkey" PRIMARY KEY ("app_id","day","outcome")
);

-- CreateTable
CREATE TABLE "owner_limits" (
    "owner_key" TEXT NOT NULL,
    "max_apps" INTEGER NOT NULL,

    CONSTRAINT "owner_limits_pkey" PRIMARY KEY ("owner_key")
);

-- CreateIndex
CREATE UNIQUE INDEX "verified_sessions_proof_key" ON "verified_sessions"("proof");

-- CreateIndex
CREATE INDEX "verified_sessions_app_id_day_user_key_idx" ON "verified_sessions"("app_id", "day", "user_key");


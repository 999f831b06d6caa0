-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateTable
CREATE TABLE "apps" (
    "id" SERIAL NOT NULL,
    "app_name" TEXT NOT NULL,
    "bot" TEXT NOT NULL,
    "domains" TEXT[],
    "owner_key" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "apps_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tokens" (
    "id" SERIAL NOT NULL,
    "app_id" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "tokens_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "surface" TEXT NOT NULL,
    "actor_key" TEXT,
    "action" TEXT NOT NULL,
    "app_id" INTEGER,
    "app_name" TEXT,
    "detail" JSONB,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "settings" (
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,

    CONSTRAINT "settings_pkey" PRIMARY KEY ("key")
);

-- CreateTable
CREATE TABLE "events" (
    "app_id" INTEGER NOT NULL,
    "event_key" BYTEA NOT NULL,
    "received_at" TIMESTAMPTZ(3) NOT NULL,
    "occurred_at" TIMESTAMPTZ(3) NOT NULL,
    "day" DATE NOT NULL,
    "event_name" TEXT NOT NULL,
    "session_id" UUID NOT NULL,
    "user_key" BYTEA NOT NULL,
    "is_premium" BOOLEAN NOT NULL,
    "is_success" BOOLEAN NOT NULL,
    "platform" TEXT,
    "locale" TEXT,
    "start_param" TEXT,
    "props" JSONB NOT NULL,

    CONSTRAINT "events_pkey" PRIMARY KEY ("app_id","event_key")
);

-- CreateTable
CREATE TABLE "daily_event_counts" (
    "app_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "event_name" TEXT NOT NULL,
    "events" BIGINT NOT NULL,

    CONSTRAINT "daily_event_counts_pkey" PRIMARY KEY ("app_id","day","event_name")
);

-- CreateTable
CREATE TABLE "daily_users" (
    "app_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "user_key" BYTEA NOT NULL,

    CONSTRAINT "daily_users_pkey" PRIMARY KEY ("app_id","day","user_key")
);

-- CreateTable
CREATE TABLE "daily_sessions" (
    "app_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "session_id" UUID NOT NULL,

    CONSTRAINT "daily_sessions_pkey" PRIMARY KEY ("app_id","day","session_id")
);

-- CreateTable
CREATE TABLE "daily_app_stats" (
    "app_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "users" INTEGER NOT NULL,
    "sessions" INTEGER NOT NULL,

    CONSTRAINT "daily_app_stats_pkey" PRIMARY KEY ("app_id","day")
);

-- CreateTable
CREATE TABLE "app_activity" (
    "app_id" INTEGER NOT NULL,
    "last_event_at" TIMESTAMPTZ(3) NOT NULL,
    "events_total" BIGINT NOT NULL,

    CONSTRAINT "app_activity_pkey" PRIMARY KEY ("app_id")
);

-- CreateTable
CREATE TABLE "rejections" (
    "id" BIGSERIAL NOT NULL,
    "app_id" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "status" INTEGER NOT NULL,
    "message" TEXT NOT NULL,
    "origin" TEXT,
    "count" INTEGER NOT NULL,

    CONSTRAINT "rejections_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "apps_app_name_key" ON "apps"("app_name");

-- CreateIndex
CREATE INDEX "apps_owner_key_idx" ON "apps"("owner_key");

-- CreateIndex
CREATE UNIQUE INDEX "tokens_hash_key" ON "tokens"("hash");

-- CreateIndex
CREATE INDEX "tokens_app_id_idx" ON "tokens"("app_id");

-- CreateIndex
CREATE INDEX "audit_log_app_id_at_idx" ON "audit_log"("app_id", "at");

-- CreateIndex
CREATE INDEX "events_app_id_received_at_idx" ON "events"("app_id", "received_at");

-- CreateIndex
CREATE INDEX "rejections_app_id_at_idx" ON "rejections"("app_id", "at");

-- AddForeignKey
ALTER TABLE "tokens" ADD CONSTRAINT "tokens_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "events" ADD CONSTRAINT "events_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "daily_event_counts" ADD CONSTRAINT "daily_event_counts_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "daily_users" ADD CONSTRAINT "daily_users_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "daily_sessions" ADD CONSTRAINT "daily_sessions_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "daily_app_stats" ADD CONSTRAINT "daily_app_stats_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_activity" ADD CONSTRAINT "app_activity_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rejections" ADD CONSTRAINT "rejections_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;


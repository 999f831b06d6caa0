-- AlterTable
ALTER TABLE "apps" ADD COLUMN     "quota_bytes_per_day" BIGINT,
ADD COLUMN     "quota_events_per_day" BIGINT;

-- AlterTable
ALTER TABLE "rejections" ADD COLUMN     "reason" TEXT;

-- CreateTable
CREATE TABLE "daily_app_usage" (
    "app_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "events" BIGINT NOT NULL,
    "bytes" BIGINT NOT NULL,

    CONSTRAINT "daily_app_usage_pkey" PRIMARY KEY ("app_id","day")
);

-- CreateIndex
CREATE INDEX "daily_app_usage_day_idx" ON "daily_app_usage"("day");


-- DropForeignKey
ALTER TABLE "app_activity" DROP CONSTRAINT "app_activity_app_id_fkey";

-- DropForeignKey
ALTER TABLE "daily_app_stats" DROP CONSTRAINT "daily_app_stats_app_id_fkey";

-- DropForeignKey
ALTER TABLE "daily_dimensions" DROP CONSTRAINT "daily_dimensions_app_id_fkey";

-- DropForeignKey
ALTER TABLE "daily_event_counts" DROP CONSTRAINT "daily_event_counts_app_id_fkey";

-- DropForeignKey
ALTER TABLE "daily_funnel_sessions" DROP CONSTRAINT "daily_funnel_sessions_app_id_fkey";

-- DropForeignKey
ALTER TABLE "daily_sessions" DROP CONSTRAINT "daily_sessions_app_id_fkey";

-- DropForeignKey
ALTER TABLE "daily_users" DROP CONSTRAINT "daily_users_app_id_fkey";

-- DropForeignKey
ALTER TABLE "events" DROP CONSTRAINT "events_app_id_fkey";


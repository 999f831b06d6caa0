-- Each app's retention period in days, set by its owner: the retention purge (src/events/retention-purge.ts)
-- deletes events and per-user rows older than it. Null (every existing app): kept until the app is deleted.
ALTER TABLE "apps" ADD COLUMN "retention_days" INTEGER;

-- A user is first seen with the launch attributes of their first event, also when that event arrives after later
-- ones: app_users keeps its time (first_at), and the attributes live there alone (daily_users' copies, written
-- only to reach app_users, are dropped). Users stored before keep theirs and are compared by day.

-- AlterTable
ALTER TABLE "app_users" ADD COLUMN "first_at" TIMESTAMPTZ(3);

-- AlterTable
ALTER TABLE "daily_users" DROP COLUMN "platform",
DROP COLUMN "locale",
DROP COLUMN "is_premium",
DROP COLUMN "start_param";

-- The first screen's wallet funnel counts users within a window from the funnel postings, as the Funnel insight and the
-- read API do: the per-session funnel rollup is read no more.
-- DropTable
DROP TABLE "daily_funnel_sessions";


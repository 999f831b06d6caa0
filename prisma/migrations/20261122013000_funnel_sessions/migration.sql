-- CreateTable
CREATE TABLE "daily_funnel_sessions" (
    "app_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "session_id" UUID NOT NULL,
    "steps" SMALLINT NOT NULL,

    CONSTRAINT "daily_funnel_sessions_pkey" PRIMARY KEY ("app_id","day","session_id")
);

-- AddForeignKey
ALTER TABLE "daily_funnel_sessions" ADD CONSTRAINT "daily_funnel_sessions_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;


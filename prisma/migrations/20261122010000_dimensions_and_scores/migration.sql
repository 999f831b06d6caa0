-- CreateTable
CREATE TABLE "daily_dimensions" (
    "app_id" INTEGER NOT NULL,
    "day" DATE NOT NULL,
    "dimension" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "sessions" BIGINT NOT NULL,

    CONSTRAINT "daily_dimensions_pkey" PRIMARY KEY ("app_id","day","dimension","value")
);

-- CreateTable
CREATE TABLE "app_scores" (
    "app_id" INTEGER NOT NULL,
    "computed_at" TIMESTAMPTZ(3) NOT NULL,
    "rank" INTEGER,
    "score" DOUBLE PRECISION,
    "components" JSONB NOT NULL,

    CONSTRAINT "app_scores_pkey" PRIMARY KEY ("app_id")
);

-- AddForeignKey
ALTER TABLE "daily_dimensions" ADD CONSTRAINT "daily_dimensions_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_scores" ADD CONSTRAINT "app_scores_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- CreateTable
CREATE TABLE "log_offsets" (
    "node" TEXT NOT NULL,
    "loaded_through" BIGINT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "log_offsets_pkey" PRIMARY KEY ("node")
);


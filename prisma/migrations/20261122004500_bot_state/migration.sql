-- CreateTable
CREATE TABLE "bot_state" (
    "key" TEXT NOT NULL,
    "value" JSONB NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "bot_state_pkey" PRIMARY KEY ("key")
);


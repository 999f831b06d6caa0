-- CreateTable
CREATE TABLE "site_sessions" (
    "id_hash" TEXT NOT NULL,
    "user_key" TEXT NOT NULL,
    "mini_app" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "site_sessions_pkey" PRIMARY KEY ("id_hash")
);

-- CreateIndex
CREATE INDEX "site_sessions_user_key_idx" ON "site_sessions"("user_key");

-- CreateIndex
CREATE INDEX "site_sessions_expires_at_idx" ON "site_sessions"("expires_at");


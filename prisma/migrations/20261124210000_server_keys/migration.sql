-- Server keys: the integrator's bot or backend sends events with one, without an Origin (src/tokens/server-keys.ts)
CREATE TABLE "server_keys" (
    "id" SERIAL NOT NULL,
    "app_id" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "server_keys_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "server_keys_hash_key" ON "server_keys"("hash");

-- CreateIndex
CREATE INDEX "server_keys_app_id_idx" ON "server_keys"("app_id");

-- CreateIndex
CREATE INDEX "server_keys_prefix_idx" ON "server_keys"("prefix");

-- AddForeignKey
ALTER TABLE "server_keys" ADD CONSTRAINT "server_keys_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

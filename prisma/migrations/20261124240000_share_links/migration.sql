-- CreateTable
CREATE TABLE "share_links" (
    "id" SERIAL NOT NULL,
    "app_id" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "share_links_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "share_links_hash_key" ON "share_links"("hash");

-- CreateIndex
CREATE INDEX "share_links_app_id_idx" ON "share_links"("app_id");

-- AddForeignKey
ALTER TABLE "share_links" ADD CONSTRAINT "share_links_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

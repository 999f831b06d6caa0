-- CreateTable
CREATE TABLE "app_members" (
    "app_id" INTEGER NOT NULL,
    "member_key" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "name" TEXT,
    "chat_key" TEXT,
    "added_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "app_members_pkey" PRIMARY KEY ("app_id","member_key")
);

-- CreateTable
CREATE TABLE "app_invites" (
    "id" SERIAL NOT NULL,
    "app_id" INTEGER NOT NULL,
    "code_hash" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "app_invites_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "app_members_member_key_idx" ON "app_members"("member_key");

-- CreateIndex
CREATE UNIQUE INDEX "app_invites_code_hash_key" ON "app_invites"("code_hash");

-- CreateIndex
CREATE INDEX "app_invites_app_id_idx" ON "app_invites"("app_id");

-- AddForeignKey
ALTER TABLE "app_members" ADD CONSTRAINT "app_members_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_invites" ADD CONSTRAINT "app_invites_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CreateTable
CREATE TABLE "login_link_uses" (
    "nonce" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "login_link_uses_pkey" PRIMARY KEY ("nonce")
);


-- CreateTable
CREATE TABLE "alert_subscriptions" (
    "id" SERIAL NOT NULL,
    "app_id" INTEGER NOT NULL,
    "chat_key" TEXT NOT NULL,
    "chat" TEXT NOT NULL,
    "silence_hours" INTEGER DEFAULT 6,
    "refusals" BOOLEAN NOT NULL DEFAULT true,
    "quota" BOOLEAN NOT NULL DEFAULT true,
    "first_event" BOOLEAN NOT NULL DEFAULT true,
    "digest" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "alert_subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_states" (
    "subscription_id" INTEGER NOT NULL,
    "condition" TEXT NOT NULL,
    "raised_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "detail" JSONB,

    CONSTRAINT "alert_states_pkey" PRIMARY KEY ("subscription_id","condition")
);

-- CreateIndex
CREATE UNIQUE INDEX "alert_subscriptions_app_id_chat_key_key" ON "alert_subscriptions"("app_id", "chat_key");

-- AddForeignKey
ALTER TABLE "alert_subscriptions" ADD CONSTRAINT "alert_subscriptions_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_states" ADD CONSTRAINT "alert_states_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "alert_subscriptions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CreateTable
CREATE TABLE "saved_funnels" (
    "id" SERIAL NOT NULL,
    "app_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "steps" TEXT[],
    "by" TEXT NOT NULL,
    "window" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "saved_funnels_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "saved_funnels_app_id_name_key" ON "saved_funnels"("app_id", "name");

-- AddForeignKey
ALTER TABLE "saved_funnels" ADD CONSTRAINT "saved_funnels_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- AlterTable
ALTER TABLE "daily_sessions" ADD COLUMN     "locale" TEXT,
ADD COLUMN     "platform" TEXT,
ADD COLUMN     "start_param" TEXT;


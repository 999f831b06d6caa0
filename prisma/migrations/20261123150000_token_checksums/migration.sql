-- Tokens issued from now on end in a keyed checksum; the ones issued before stay valid without one.
-- AlterTable
ALTER TABLE "tokens" ADD COLUMN     "checksummed" BOOLEAN NOT NULL DEFAULT false;

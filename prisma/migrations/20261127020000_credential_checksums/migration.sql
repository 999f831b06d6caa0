-- Server keys, read keys and share links issued from now on end in a keyed checksum, so a made-up one is refused
-- without a lookup; the ones issued before keep working (every node reads their hashes at start).
ALTER TABLE "read_keys" ADD COLUMN "checksummed" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "server_keys" ADD COLUMN "checksummed" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "share_links" ADD COLUMN "checksummed" BOOLEAN NOT NULL DEFAULT false;

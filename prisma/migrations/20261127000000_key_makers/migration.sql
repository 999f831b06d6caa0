-- Who made each read key, server key and public link: the maker's keyed hash as app_members.member_key holds it, or
-- 'operator' for the operator CLI; removing a member revokes what they made. Rows made before are given the maker
-- their audit entry names; where none does, created_by stays NULL (unknown) and no removal revokes them.
ALTER TABLE "read_keys" ADD COLUMN "created_by" TEXT;
ALTER TABLE "server_keys" ADD COLUMN "created_by" TEXT;
ALTER TABLE "share_links" ADD COLUMN "created_by" TEXT;

UPDATE "read_keys" AS k SET "created_by" = COALESCE(a."actor_key", 'operator')
  FROM "audit_log" AS a
  WHERE a."app_id" = k."app_id" AND a."action" = 'read_key.create' AND a."detail"->>'prefix' = k."prefix";
UPDATE "server_keys" AS k SET "created_by" = COALESCE(a."actor_key", 'operator')
  FROM "audit_log" AS a
  WHERE a."app_id" = k."app_id" AND a."action" = 'server_key.create' AND a."detail"->>'prefix' = k."prefix";
UPDATE "share_links" AS k SET "created_by" = COALESCE(a."actor_key", 'operator')
  FROM "audit_log" AS a
  WHERE a."app_id" = k."app_id" AND a."action" = 'share_link.create' AND a."detail"->>'prefix' = k."prefix";

CREATE INDEX "read_keys_app_id_created_by_idx" ON "read_keys"("app_id", "created_by");
CREATE INDEX "server_keys_app_id_created_by_idx" ON "server_keys"("app_id", "created_by");
CREATE INDEX "share_links_app_id_created_by_idx" ON "share_links"("app_id", "created_by");

-- The owner's Telegram first name, kept when the app changes hands, so a member made owner and back keeps theirs.
ALTER TABLE "apps" ADD COLUMN "owner_name" TEXT;

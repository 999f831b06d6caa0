-- The owner chooses whether the app is in the public catalog; the apps listed before keep their place.
ALTER TABLE "apps" ADD COLUMN "catalog_listed" BOOLEAN NOT NULL DEFAULT true;

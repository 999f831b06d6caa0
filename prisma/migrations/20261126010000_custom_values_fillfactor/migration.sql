-- A property value's count is updated by every batch that holds it all day long: pages kept a fifth empty let the
-- update write the row's new version beside the old one (a HOT update), with no new entry in the five-column key's
-- index. New pages keep the room; pages already full keep their rows as they are.
ALTER TABLE "daily_custom_values" SET (fillfactor = 80);

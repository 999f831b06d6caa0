-- An index for funnels: events by app, the name a funnel step finds them by (the event's name, or for a custom event
-- 'custom-event:' and its own name) and day, so a funnel reads only its steps' events. The expression is
-- stepNameSql() in src/events/custom-events.ts, character for character; Prisma's schema cannot describe an
-- expression index.
CREATE INDEX "events_app_id_step_name_day_idx" ON "events" ("app_id", (CASE WHEN event_name = 'custom-event' THEN 'custom-event:' || CASE WHEN jsonb_typeof(props->'custom_data'->'name') = 'string' THEN left(props->'custom_data'->>'name', 64) ELSE '(no name)' END ELSE event_name END), "day");

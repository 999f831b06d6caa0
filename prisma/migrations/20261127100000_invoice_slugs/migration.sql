-- Revenue prices a Mini App's purchase-success by the register-invoice of the same slug: a partial index holds the
-- register-invoice events alone, by app, slug (the part after a leading "$" or a t.me link's last "/", at most 200
-- characters; INVOICE_SLUG in src/events/revenue.ts, character for character) and time, so a purchase finds its
-- invoice in one probe, whenever the invoice was registered, and other events cost ingestion nothing.

-- CreateIndex
CREATE INDEX "events_app_id_invoice_slug_idx" ON "events" ("app_id", (left(regexp_replace(props->>'slug', '^.*[$/]', ''), 200)), "occurred_at")
    WHERE event_name = 'register-invoice';

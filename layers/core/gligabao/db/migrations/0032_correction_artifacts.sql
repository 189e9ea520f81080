-- Facts corrected by hand (PATCH /v1/gb/edges/{id}): each correction is an artifact of its own
-- kind, the provenance of the fact it stores; its text records, as JSON, who asked, the fact it
-- corrected and that fact's previous values (memory/corrections.py). A constraint change only:
-- no row is rewritten.
ALTER TABLE gb_artifacts DROP CONSTRAINT gb_artifacts_kind_check;
ALTER TABLE gb_artifacts ADD CONSTRAINT gb_artifacts_kind_check
    CHECK (kind IN ('text', 'chunk', 'image', 'facts', 'correction'));

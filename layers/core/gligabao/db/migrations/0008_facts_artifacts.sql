-- Bring your own facts: a remember of `facts` (entities and edges the caller extracted) stores
-- them, as given, in an artifact of its own kind, the provenance of every entity and edge stated.

ALTER TABLE gb_artifacts DROP CONSTRAINT gb_artifacts_kind_check;
ALTER TABLE gb_artifacts ADD CONSTRAINT gb_artifacts_kind_check
    CHECK (kind IN ('text', 'chunk', 'image', 'facts'));

-- The caller's own labels on what it remembers: a flat JSON object (string, number and boolean
-- values; api/metadata_models.py checks the keys, the values and the size before anything is
-- stored).
--
-- A chunk carries its text's, so a passage matches a filter as its text does. A constant default
-- adds the column without rewriting the table. No index: the filters (db/retrieval_filters.py)
-- test `metadata @> filter` on the artifacts of the candidate rows a search or a page already
-- holds, each found by its primary key, never by scanning artifacts for a label.
ALTER TABLE gb_artifacts
    ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'::jsonb
        CONSTRAINT gb_artifacts_metadata_object CHECK (pg_catalog.jsonb_typeof(metadata) = 'object');

-- The caller's own labels on what it remembers: a flat JSON object (string, number and boolean
-- values; api/metadata.py checks the keys, the values and the size before anything is stored).
--
-- A chunk carries its text's, so a passage matches a filter as its text does. A constant default
-- adds the column without rewriting the table. The GIN index (jsonb_path_ops: containment only,
-- the one operator the filters use) serves `metadata @> '{"k": "v"}'` across a dataset's
-- artifacts; an empty object, the default, is left out of it.
ALTER TABLE gb_artifacts
    ADD COLUMN metadata jsonb NOT NULL DEFAULT '{}'::jsonb
        CONSTRAINT gb_artifacts_metadata_object CHECK (pg_catalog.jsonb_typeof(metadata) = 'object');

CREATE INDEX gb_artifacts_metadata ON gb_artifacts USING gin (metadata jsonb_path_ops)
    WHERE metadata <> '{}'::jsonb;

-- A remember that mentions a known entity bumps its updated_at. While updated_at was indexed in
-- gb_entities, every such touch was a non-HOT update: PostgreSQL put the new row version in every
-- index of the table, the HNSW index of the entity's unchanged vector included (the costliest
-- part of remembering facts about known entities; bench/entity_touch.py measures it).
--
-- The recency index moves to a narrow table of its own, kept by triggers, which the keyword
-- statement's recent-entities window and the fallback seeds read. gb_entities keeps updated_at
-- (read back, exported) unindexed, and leaves 10% of each page free, so that a touch is a HOT
-- update: a new row version on the same page, no index entry at all. Pages written before this
-- migration are full until rewritten (VACUUM FULL, or as their rows move): their touches are not
-- HOT until then.

CREATE TABLE gb_entity_recency (
    entity_id  bigint PRIMARY KEY REFERENCES gb_entities (id) ON DELETE CASCADE,
    dataset_id bigint NOT NULL REFERENCES gb_datasets (id) ON DELETE CASCADE,
    updated_at timestamptz NOT NULL
);
CREATE INDEX gb_entity_recency_recent ON gb_entity_recency (dataset_id, updated_at DESC, entity_id DESC);

INSERT INTO gb_entity_recency (entity_id, dataset_id, updated_at)
SELECT id, dataset_id, updated_at FROM gb_entities;

ALTER TABLE gb_entity_recency ENABLE ROW LEVEL SECURITY;
CREATE POLICY gb_entity_recency_of_the_user ON gb_entity_recency USING (dataset_id = ANY (ARRAY(
    SELECT id FROM gb_datasets WHERE user_id = NULLIF(current_setting('gligabao.user_id', true), ''))));
GRANT SELECT, INSERT, UPDATE, DELETE ON gb_entity_recency TO gligabao_app;

-- One statement per statement of gb_entities (transition tables), whatever the rows; a row whose
-- updated_at did not change (coordinates set, a description filled in the same statement) writes
-- nothing.
CREATE FUNCTION gb_entity_recency_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO gb_entity_recency AS r (entity_id, dataset_id, updated_at)
    SELECT id, dataset_id, updated_at FROM changed_entities
    ON CONFLICT (entity_id) DO UPDATE SET updated_at = EXCLUDED.updated_at
    WHERE r.updated_at IS DISTINCT FROM EXCLUDED.updated_at;
    RETURN NULL;
END $$;

CREATE TRIGGER gb_entities_recency_inserted AFTER INSERT ON gb_entities
    REFERENCING NEW TABLE AS changed_entities FOR EACH STATEMENT EXECUTE FUNCTION gb_entity_recency_keep();
CREATE TRIGGER gb_entities_recency_updated AFTER UPDATE ON gb_entities
    REFERENCING NEW TABLE AS changed_entities FOR EACH STATEMENT EXECUTE FUNCTION gb_entity_recency_keep();

DROP INDEX gb_entities_recent;
ALTER TABLE gb_entities SET (fillfactor = 90);

-- The description gram index moves from gb_entities to a narrow table of its own, which
-- gb_entities_described reads.
--
-- A common word of a question ("bank") is held by thousands of descriptions, and the keyword
-- statement sorts all of its holders to find the most recently updated ones (migration 0016).
-- In gb_entities each holder is a page read: its rows are wide (the vector, inline when it is
-- small) and half of each page is left free for touches (migration 0010): under EXPLAIN
-- (ANALYZE, BUFFERS), by hand, the million-edge benchmark's 15,919 holders of "bank" were on 15,082
-- pages (31 ms). Here a row is the description, lowercased, with the entity's dataset and
-- updated_at: about 70 rows a full page.
--
-- Kept by triggers, as gb_entity_recency (migration 0009). updated_at is in no index of this
-- table, and half of each page is left free (as in gb_entities, migration 0010), so a touch (a
-- remember mentioning a known entity) stays a HOT update that writes no gram of the description
-- again (in gb_entity_recency, whose index holds updated_at, every touch would write them all
-- again). The same lookup of "bank" on a copy of this table, by hand: 9.5 ms (7.1 ms with full
-- pages). bench/query.py --explain measures the keyword statement it serves (README, Performance).
CREATE TABLE gb_entity_descriptions (
    entity_id         bigint PRIMARY KEY REFERENCES gb_entities (id) ON DELETE CASCADE,
    dataset_id        bigint NOT NULL REFERENCES gb_datasets (id) ON DELETE CASCADE,
    updated_at        timestamptz NOT NULL,
    lower_description text NOT NULL
) WITH (fillfactor = 50);

INSERT INTO gb_entity_descriptions (entity_id, dataset_id, updated_at, lower_description)
SELECT id, dataset_id, updated_at, lower(description) FROM gb_entities;

CREATE INDEX gb_entity_descriptions_grams ON gb_entity_descriptions
    USING gin (gb_grams(dataset_id, lower_description));
DROP INDEX gb_entities_description_grams;

ALTER TABLE gb_entity_descriptions ENABLE ROW LEVEL SECURITY;
CREATE POLICY gb_entity_descriptions_of_the_user ON gb_entity_descriptions USING (dataset_id = ANY (ARRAY(
    SELECT id FROM gb_datasets WHERE user_id = NULLIF(current_setting('gligabao.user_id', true), ''))));
GRANT SELECT, INSERT, UPDATE, DELETE ON gb_entity_descriptions TO gligabao_app;

-- One statement per statement of gb_entities (transition tables); a row whose dataset, updated_at
-- and description did not change writes nothing.
CREATE FUNCTION gb_entity_descriptions_keep() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO gb_entity_descriptions AS d (entity_id, dataset_id, updated_at, lower_description)
    SELECT id, dataset_id, updated_at, lower(description) FROM changed_entities
    ON CONFLICT (entity_id) DO UPDATE
    SET dataset_id = EXCLUDED.dataset_id, updated_at = EXCLUDED.updated_at,
        lower_description = EXCLUDED.lower_description
    WHERE (d.dataset_id, d.updated_at, d.lower_description)
          IS DISTINCT FROM (EXCLUDED.dataset_id, EXCLUDED.updated_at, EXCLUDED.lower_description);
    RETURN NULL;
END $$;

CREATE TRIGGER gb_entities_descriptions_inserted AFTER INSERT ON gb_entities
    REFERENCING NEW TABLE AS changed_entities FOR EACH STATEMENT EXECUTE FUNCTION gb_entity_descriptions_keep();
CREATE TRIGGER gb_entities_descriptions_updated AFTER UPDATE ON gb_entities
    REFERENCING NEW TABLE AS changed_entities FOR EACH STATEMENT EXECUTE FUNCTION gb_entity_descriptions_keep();

-- As in migration 0016, from the narrow table: with `take` and `term`, the `take` most recently
-- updated entities whose description holds `term` itself; without them, every entity whose
-- description holds the grams. With the owner's rights, in the transaction user's dataset only.
CREATE OR REPLACE FUNCTION gb_entities_described(dataset bigint, grams text[], take integer DEFAULT NULL, term text DEFAULT NULL)
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
BEGIN
    RETURN ARRAY(
        SELECT d.entity_id FROM gb_entity_descriptions AS d
        WHERE d.dataset_id = dataset
          AND gb_grams(d.dataset_id, d.lower_description) @> gb_keys(dataset, grams)
          AND (term IS NULL OR strpos(d.lower_description, term) > 0)
          AND EXISTS (SELECT 1 FROM gb_datasets AS s
                      WHERE s.id = dataset
                        AND s.user_id = NULLIF(current_setting('gligabao.user_id', true), ''))
        ORDER BY d.updated_at DESC, d.entity_id DESC
        LIMIT take);
END
$$;

-- The most recently updated holders of a common word, found by walking the most recently updated
-- entities instead of sorting every holder (db/graph_reads.py, keyword_seeds).
--
-- The keyword statement's older entities holding one term are the `take` most recently updated
-- holders of each term (migration 0016). gb_entities_described finds them by the gram index, then
-- reads and sorts every holder: 15,919 rows for "bank" among the million-edge benchmark's 250,000
-- entities (9.5 ms from gb_entity_descriptions, migration 0017). When the window of recent
-- entities already held many holders of the term, its newest holders are near the top of the
-- recency index: the walk reads the entities in that order and stops at the `take`-th holder (391
-- rows for "bank", 0.5 ms under EXPLAIN ANALYZE, by hand).
--
-- The walk reads at most `walk` entities (the caller sizes it from the window's count, so that
-- the walk is tried only where it should end early). When those hold fewer than `take` holders, the
-- gram index answers instead: the result is the same either way, since gb_entity_recency and
-- gb_entity_descriptions hold the same updated_at of each entity (both kept by triggers), in the
-- same order (updated_at, then id, newest first). With the owner's rights, in the transaction
-- user's dataset only, ids only.
CREATE FUNCTION gb_entities_recently_described(dataset bigint, grams text[], take integer, term text, walk integer)
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    walked bigint[];
BEGIN
    IF walk > 0 THEN
        walked := ARRAY(
            SELECT r.entity_id
            FROM (SELECT entity_id, updated_at FROM gb_entity_recency
                  WHERE dataset_id = dataset
                  ORDER BY updated_at DESC, entity_id DESC
                  LIMIT walk) AS r
            JOIN gb_entity_descriptions AS d ON d.entity_id = r.entity_id
            WHERE strpos(d.lower_description, term) > 0
              AND EXISTS (SELECT 1 FROM gb_datasets AS s
                          WHERE s.id = dataset
                            AND s.user_id = NULLIF(current_setting('gligabao.user_id', true), ''))
            ORDER BY r.updated_at DESC, r.entity_id DESC
            LIMIT take);
        IF cardinality(walked) >= take THEN
            RETURN walked;
        END IF;
    END IF;
    RETURN gb_entities_described(dataset, grams, take, term);
END
$$;

REVOKE ALL ON FUNCTION gb_entities_recently_described(bigint, text[], integer, text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_entities_recently_described(bigint, text[], integer, text, integer) TO gligabao_app;

-- The gram lookups of the keyword statement read their gram index whatever the statistics say.
--
-- gb_entities_named and gb_entities_described (migrations 0003, 0017) find the entities whose name
-- or description holds a term's grams. Their plans were the planner's choice, and it does not see
-- what a row costs outside the gram index: gb_grams() cuts the whole text into grams for every row
-- it filters (about 45 us a short name, far more a description). Two plans it chose that way:
-- * on a small dataset, a read of every entity of the dataset (sequential, or by a dataset index)
--   with gb_grams() on each: 51 names, 2.3 ms a term, against 0.08 ms from the gram index (EXPLAIN
--   ANALYZE by hand on bench/overhead.py's graph of 50 facts); a question of two terms paid it twice;
-- * on tables no ANALYZE has seen yet (right after an import, before autovacuum), whatever its
--   default estimates pick.
-- The gram keys carry the dataset (gb_keys), so the gram index alone finds the dataset's holders
-- and reads no other row: that is always the plan wanted. The dataset's own condition is kept as a
-- filter only (`+ 0`: no dataset index can serve it) and a sequential scan is ruled out for the
-- function's statement (SET enable_seqscan, the function's own setting, restored on return).
-- The results are unchanged: same conditions, same order.
CREATE OR REPLACE FUNCTION gb_entities_named(dataset bigint, grams text[]) RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = public, pg_temp
SET enable_seqscan = off
AS $$
BEGIN
    RETURN ARRAY(
        SELECT e.id FROM gb_entities AS e
        WHERE gb_grams(e.dataset_id, e.normalized_name) @> gb_keys(dataset, grams)
          AND e.dataset_id + 0 = dataset
          AND EXISTS (SELECT 1 FROM gb_datasets AS d
                      WHERE d.id = dataset
                        AND d.user_id = NULLIF(current_setting('gligabao.user_id', true), '')));
END
$$;

CREATE OR REPLACE FUNCTION gb_entities_described(dataset bigint, grams text[], take integer DEFAULT NULL, term text DEFAULT NULL)
RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = public, pg_temp
SET enable_seqscan = off
AS $$
BEGIN
    RETURN ARRAY(
        SELECT d.entity_id FROM gb_entity_descriptions AS d
        WHERE gb_grams(d.dataset_id, d.lower_description) @> gb_keys(dataset, grams)
          AND d.dataset_id + 0 = dataset
          AND (term IS NULL OR strpos(d.lower_description, term) > 0)
          AND EXISTS (SELECT 1 FROM gb_datasets AS s
                      WHERE s.id = dataset
                        AND s.user_id = NULLIF(current_setting('gligabao.user_id', true), ''))
        ORDER BY d.updated_at DESC, d.entity_id DESC
        LIMIT take);
END
$$;

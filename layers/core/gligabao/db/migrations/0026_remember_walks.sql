-- Remember's vector searches in a dataset larger than GB_EXACT_SCAN_MAX_ROWS walk the index.
--
-- Remember's search for candidate facts, and its entity match with the name guard off, order a
-- dataset's rows by distance. A dataset of at most GB_EXACT_SCAN_MAX_ROWS rows is ordered by the
-- full vectors, whose cosines a sort computes. A larger one goes through these functions. In a
-- statement of its own, the planner would choose between walking the half-precision index and
-- sorting the dataset's rows in its order, and near 1,000 rows its choice shifts with the
-- statistics; that sort scales and halves every row's vector for every new fact (50 new facts
-- among 990 live ones: 597 ms sorted, 69.5 ms walked, 82.0 ms by the full vectors;
-- bench/fact_candidates.py). Here, with sorts off, the walk is the one way, as in the query's
-- searches of migration 0014. Either reads whichever index the table has (migration 0019).

CREATE FUNCTION gb_nearest_live_edges(ds bigint, q vector, candidates integer)
RETURNS TABLE (id bigint, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    IF gb_half_index_ready('gb_edges_embedding_half') THEN
        RETURN QUERY
            SELECT g.id, g.embedding <=> q FROM gb_edges AS g
            WHERE g.dataset_id = ds AND g.expired_at IS NULL AND g.embedding IS NOT NULL
            ORDER BY gb_half(g.embedding) <=> gb_half(q) LIMIT candidates;
    ELSE
        RETURN QUERY
            SELECT g.id, g.embedding <=> q FROM gb_edges AS g
            WHERE g.dataset_id = ds AND g.expired_at IS NULL AND g.embedding IS NOT NULL
            ORDER BY g.embedding <=> q LIMIT candidates;
    END IF;
END
$$;

CREATE FUNCTION gb_nearest_dataset_entities(ds bigint, q vector, candidates integer)
RETURNS TABLE (id bigint, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    IF gb_half_index_ready('gb_entities_embedding_half') THEN
        RETURN QUERY
            SELECT e.id, e.embedding <=> q FROM gb_entities AS e
            WHERE e.dataset_id = ds AND e.embedding IS NOT NULL
            ORDER BY gb_half(e.embedding) <=> gb_half(q) LIMIT candidates;
    ELSE
        RETURN QUERY
            SELECT e.id, e.embedding <=> q FROM gb_entities AS e
            WHERE e.dataset_id = ds AND e.embedding IS NOT NULL
            ORDER BY e.embedding <=> q LIMIT candidates;
    END IF;
END
$$;

REVOKE ALL ON FUNCTION gb_nearest_live_edges(bigint, vector, integer),
    gb_nearest_dataset_entities(bigint, vector, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_nearest_live_edges(bigint, vector, integer),
    gb_nearest_dataset_entities(bigint, vector, integer) TO gligabao_app;

-- The nearest rows of each vector index, read from the index whatever the planner estimates.
--
-- A query's similarity searches take a table's nearest rows from its HNSW index only for a dataset
-- over the exact-scan size (db/graph_reads.py), where the index is the fast path. But pgvector 0.8
-- (Aurora PostgreSQL's, and the embedded PostgreSQL's) prices an HNSW scan above reading every row
-- the user may see and sorting them by distance when the vectors are stored out of line (entities
-- and passages at 1536 dimensions): its estimate of that plan leaves out the TOAST that each
-- distance reads. At 100k edges the planner read all 27,000 entity vectors (85-131 ms) instead of
-- searching the index (3-4 ms).
--
-- In these functions sequential scans, bitmap scans and sorts are priced out, so the index is the
-- only way left to order the table by distance. The settings hold inside the functions only: the
-- rest of the query is planned as before. SECURITY INVOKER (the default): row-level security
-- keeps the caller's rows, as in the query. The candidates are filtered by dataset afterwards.
CREATE FUNCTION gb_nearest_entities(q vector, candidates integer)
RETURNS TABLE (id bigint, dataset_id bigint, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    RETURN QUERY
        SELECT e.id, e.dataset_id, e.embedding <=> q FROM gb_entities AS e
        ORDER BY e.embedding <=> q LIMIT candidates;
END
$$;

CREATE FUNCTION gb_nearest_edges(q vector, candidates integer)
RETURNS TABLE (id bigint, dataset_id bigint, valid_at timestamptz, invalid_at timestamptz,
               expired_at timestamptz, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    RETURN QUERY
        SELECT g.id, g.dataset_id, g.valid_at, g.invalid_at, g.expired_at, g.embedding <=> q
        FROM gb_edges AS g
        ORDER BY g.embedding <=> q LIMIT candidates;
END
$$;

CREATE FUNCTION gb_nearest_chunks(q vector, candidates integer)
RETURNS TABLE (id bigint, dataset_id bigint, kind text, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    RETURN QUERY
        SELECT a.id, a.dataset_id, a.kind, a.embedding <=> q FROM gb_artifacts AS a
        ORDER BY a.embedding <=> q LIMIT candidates;
END
$$;

CREATE FUNCTION gb_nearest_summaries(q vector, candidates integer)
RETURNS TABLE (id bigint, dataset_id bigint, kind text, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    RETURN QUERY
        SELECT a.id, a.dataset_id, a.kind, a.summary_embedding <=> q FROM gb_artifacts AS a
        ORDER BY a.summary_embedding <=> q LIMIT candidates;
END
$$;

REVOKE ALL ON FUNCTION gb_nearest_entities(vector, integer), gb_nearest_edges(vector, integer),
    gb_nearest_chunks(vector, integer), gb_nearest_summaries(vector, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_nearest_entities(vector, integer), gb_nearest_edges(vector, integer),
    gb_nearest_chunks(vector, integer), gb_nearest_summaries(vector, integer) TO gligabao_app;

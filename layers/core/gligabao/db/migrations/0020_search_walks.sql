-- Each search walks as many candidates as it takes: the four searches of migrations 0014 and 0019
-- set `hnsw.ef_search` to their `candidates` themselves (for the rest of the transaction, which
-- every later search sets again), instead of all reading the one value the keyword statement set.
-- A pgvector HNSW scan returns at most `hnsw.ef_search` rows, so a search could not take more
-- candidates than that, and so the facts' search could not walk wider than the others.
--
-- The facts' search is the one whose recall depends on the width of the walk
-- (`GB_HNSW_FACT_CANDIDATES`, 80; the others `GB_HNSW_CANDIDATES`, 64): at a million edges,
-- `bench/query.py --sizes 1m --dims 256 --ef-sweep 64,80,100,128` found 299 of the exact scan's 310
-- similar facts at 64 and 309 at 80, 100 and 128, and the same 278 of 280 similarity seeds and 13 of
-- 13 passages at each (README "Performance").

CREATE OR REPLACE FUNCTION gb_nearest_entities(q vector, candidates integer)
RETURNS TABLE (id bigint, dataset_id bigint, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    PERFORM set_config('hnsw.ef_search', candidates::text, true);
    IF gb_half_index_ready('gb_entities_embedding_half') THEN
        RETURN QUERY
            SELECT e.id, e.dataset_id, e.embedding <=> q FROM gb_entities AS e
            ORDER BY gb_half(e.embedding) <=> gb_half(q) LIMIT candidates;
    ELSE
        RETURN QUERY
            SELECT e.id, e.dataset_id, e.embedding <=> q FROM gb_entities AS e
            ORDER BY e.embedding <=> q LIMIT candidates;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION gb_nearest_edges(q vector, candidates integer)
RETURNS TABLE (id bigint, dataset_id bigint, valid_at timestamptz, invalid_at timestamptz,
               expired_at timestamptz, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    PERFORM set_config('hnsw.ef_search', candidates::text, true);
    IF gb_half_index_ready('gb_edges_embedding_half') THEN
        RETURN QUERY
            SELECT g.id, g.dataset_id, g.valid_at, g.invalid_at, g.expired_at, g.embedding <=> q
            FROM gb_edges AS g
            ORDER BY gb_half(g.embedding) <=> gb_half(q) LIMIT candidates;
    ELSE
        RETURN QUERY
            SELECT g.id, g.dataset_id, g.valid_at, g.invalid_at, g.expired_at, g.embedding <=> q
            FROM gb_edges AS g
            ORDER BY g.embedding <=> q LIMIT candidates;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION gb_nearest_chunks(q vector, candidates integer)
RETURNS TABLE (id bigint, dataset_id bigint, kind text, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    PERFORM set_config('hnsw.ef_search', candidates::text, true);
    IF gb_half_index_ready('gb_artifacts_embedding_half') THEN
        RETURN QUERY
            SELECT a.id, a.dataset_id, a.kind, a.embedding <=> q FROM gb_artifacts AS a
            ORDER BY gb_half(a.embedding) <=> gb_half(q) LIMIT candidates;
    ELSE
        RETURN QUERY
            SELECT a.id, a.dataset_id, a.kind, a.embedding <=> q FROM gb_artifacts AS a
            ORDER BY a.embedding <=> q LIMIT candidates;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION gb_nearest_summaries(q vector, candidates integer)
RETURNS TABLE (id bigint, dataset_id bigint, kind text, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
    PERFORM set_config('hnsw.ef_search', candidates::text, true);
    IF gb_half_index_ready('gb_artifacts_summary_embedding_half') THEN
        RETURN QUERY
            SELECT a.id, a.dataset_id, a.kind, a.summary_embedding <=> q FROM gb_artifacts AS a
            ORDER BY gb_half(a.summary_embedding) <=> gb_half(q) LIMIT candidates;
    ELSE
        RETURN QUERY
            SELECT a.id, a.dataset_id, a.kind, a.summary_embedding <=> q FROM gb_artifacts AS a
            ORDER BY a.summary_embedding <=> q LIMIT candidates;
    END IF;
END
$$;

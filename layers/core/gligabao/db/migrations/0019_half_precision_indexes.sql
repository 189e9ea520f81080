-- The four HNSW indexes hold their vectors at half precision (pgvector's halfvec): 2 bytes a
-- dimension instead of 4. At 1536 dimensions a vector no longer fills an index page of its own, so
-- an index is half the size (the edges' at 100,000 edges: 422 MB instead of 844), and so is the
-- memory that keeps it warm (bench/query.py, README "Performance"). The columns keep their full
-- vectors: the distances a search returns, and every exact scan, are computed from them, so only
-- the order in which the index walks its graph is half-precision (a cosine differed from the full
-- one by at most 0.00003 in 6,000 pairs of the 100,000-edge benchmark's vectors, by hand).
--
-- A vector is scaled to length 1 before it is halved: halfvec holds at most 65,504, while an
-- embeddings reply may hold any finite float32 (a test reads one of 3.4e38s), and a vector the
-- index could not hold would fail the whole remember. Cosines do not change with the scale.
--
-- gb_half(v) is that expression for the statements: a plain SQL function that the planner inlines
-- into `l2_normalize(v)::halfvec(N)`, the indexes' expression, so a statement ordering by
-- `gb_half(embedding) <=> gb_half(q)` reads the index (tests count its scans).
CREATE OR REPLACE FUNCTION gb_half(v vector) RETURNS halfvec({dimensions})
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN l2_normalize(v)::halfvec({dimensions});

-- As in migration 0012, the migrate function's 600 s hold no build of a large index: a table over
-- 50,000 rows keeps its full-precision index (a notice says so) until it is rebuilt by hand,
-- without blocking writes (README "Deploy", "Rebuilding the vector indexes"), and the searches
-- read whichever index of the two is there and valid. gb_half_index_ready says which.
CREATE OR REPLACE FUNCTION gb_half_index_ready(index_name text) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = public, pg_temp
RETURN coalesce((SELECT i.indisvalid FROM pg_index AS i WHERE i.indexrelid = to_regclass(index_name)), false);

DO $$
DECLARE
    vector_index record;
    row_count bigint;
BEGIN
    FOR vector_index IN
        SELECT * FROM (VALUES
            ('gb_edges_embedding', 'gb_edges', 'embedding'),
            ('gb_entities_embedding', 'gb_entities', 'embedding'),
            ('gb_artifacts_embedding', 'gb_artifacts', 'embedding'),
            ('gb_artifacts_summary_embedding', 'gb_artifacts', 'summary_embedding')
        ) AS i(name, table_name, column_name)
    LOOP
        EXECUTE format('SELECT count(*) FROM (SELECT 1 FROM %I LIMIT 50001) AS r', vector_index.table_name)
            INTO row_count;
        IF row_count > 50000 THEN
            RAISE NOTICE 'gligabao: % keeps its full-precision HNSW index % (over 50,000 rows): build %_half by hand',
                vector_index.table_name, vector_index.name, vector_index.name;
            CONTINUE;
        END IF;
        EXECUTE format(
            'CREATE INDEX IF NOT EXISTS %I ON %I USING hnsw ((l2_normalize(%I)::halfvec({dimensions})) halfvec_cosine_ops) '
            'WITH (m = 16, ef_construction = 128)',
            vector_index.name || '_half', vector_index.table_name, vector_index.column_name
        );
        EXECUTE format('DROP INDEX IF EXISTS %I', vector_index.name);
    END LOOP;
END
$$;

-- Migration 0014's searches, reading the half-precision index when it is there and valid, else the
-- full-precision one; the distances they return are the full vectors'.
CREATE OR REPLACE FUNCTION gb_nearest_entities(q vector, candidates integer)
RETURNS TABLE (id bigint, dataset_id bigint, distance double precision)
LANGUAGE plpgsql STABLE
SET search_path = public, pg_temp
SET enable_seqscan = off SET enable_bitmapscan = off SET enable_sort = off
AS $$
BEGIN
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

REVOKE ALL ON FUNCTION gb_half(vector), gb_half_index_ready(text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_half(vector), gb_half_index_ready(text) TO gligabao_app;

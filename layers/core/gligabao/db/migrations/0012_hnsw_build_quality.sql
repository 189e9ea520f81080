-- The HNSW indexes are built with ef_construction 128 instead of pgvector's default 64. At a
-- million edges in tight topic clusters, an index built at 64 leaves some rows unreachable in its
-- graph: no ef_search finds them (40, 64, 200 and 1,000 miss the same rows), and the similar facts
-- of the HNSW path held 0.923 of an exact scan's; built at 128 they hold 1.000, at the same query
-- time (bench/query.py, README "Performance"). Building takes about twice as long.
--
-- The migrate function has 600 s, in one transaction: an index over more than 50,000 rows is left
-- as it is (a notice says so), to be rebuilt by hand without blocking writes (README "Deploy",
-- "Rebuilding the vector indexes"). A new database rebuilds its empty indexes at once.
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
            RAISE NOTICE 'gligabao: % keeps its HNSW index % (over 50,000 rows): rebuild it with ef_construction 128 by hand',
                vector_index.table_name, vector_index.name;
            CONTINUE;
        END IF;
        EXECUTE format('DROP INDEX %I', vector_index.name);
        EXECUTE format(
            'CREATE INDEX %I ON %I USING hnsw (%I vector_cosine_ops) WITH (m = 16, ef_construction = 128)',
            vector_index.name, vector_index.table_name, vector_index.column_name
        );
    END LOOP;
END
$$;

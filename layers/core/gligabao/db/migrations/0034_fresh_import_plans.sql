-- The live edges of an entity, newest first, read in the order the write path and retrieval take
-- them: (created_at DESC, id DESC), with the id that tells apart the facts of one remember (they
-- share its transaction's created_at).
--
-- The indexes of migration 0001 held (created_at DESC) only. With statistics the planner read them
-- in that order and sorted each run of equal times; without (a dataset just imported, which
-- autovacuum has not analyzed yet) it took the entity's live edges through a bitmap scan of any
-- index led by the entity (gb_edges_live_pair) and sorted them all, for an entity most facts are
-- about every one of its facts instead of the newest 1,000 (docs/performance.md, "The write path
-- as the graph grows"). In the exact order, the ordered walk needs no sort and is the cheaper plan
-- with statistics or without.
--
-- Built beside the old ones, which are dropped only then, so that the table is locked against
-- reads only for the drop at the end, not for the build.
CREATE INDEX gb_edges_live_source_newest ON gb_edges (source_id, created_at DESC, id DESC)
    WHERE expired_at IS NULL;
CREATE INDEX gb_edges_live_target_newest ON gb_edges (target_id, created_at DESC, id DESC)
    WHERE expired_at IS NULL;
DROP INDEX gb_edges_live_source;
DROP INDEX gb_edges_live_target;
ALTER INDEX gb_edges_live_source_newest RENAME TO gb_edges_live_source;
ALTER INDEX gb_edges_live_target_newest RENAME TO gb_edges_live_target;

-- gb_analyze_stale_graph(): analyze the graph's tables that autovacuum would analyze now (those
-- changed by more than autovacuum_analyze_threshold + autovacuum_analyze_scale_factor x their rows
-- since their last analysis), and at least 1,000 rows (below that, a table's plans hardly differ and
-- its analysis would be a cost to every few remembers), and return their names. A large remember and a window of texts call
-- it at the end of their transaction, so that a dataset being imported has statistics before
-- autovacuum comes round to it (the planner's choices for the query's statements depend on them).
--
-- With the owner's rights: ANALYZE needs the table's owner (or MAINTAIN, since PostgreSQL 17), which
-- the service's role is not. SKIP_LOCKED: a table that autovacuum or another remember is analyzing
-- is left to it, without waiting. A failure is a warning and never the caller's: the remember's
-- rows matter, the statistics are a help. What changed in the caller's own transaction is counted
-- from the next call on (the statistics' counters see committed work only).
CREATE FUNCTION gb_analyze_stale_graph() RETURNS text[]
LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp
AS $$
DECLARE
    stale regclass;
    analyzed text[] := '{}';
BEGIN
    FOR stale IN
        SELECT s.relid::regclass
        FROM pg_stat_user_tables AS s
        JOIN pg_class AS c ON c.oid = s.relid
        WHERE s.schemaname = 'public'
          AND s.relname IN ('gb_entities', 'gb_edges', 'gb_artifacts', 'gb_entity_artifacts',
                            'gb_edge_artifacts', 'gb_entity_sessions', 'gb_edge_sessions')
          AND s.n_mod_since_analyze > greatest(
                  1000,
                  current_setting('autovacuum_analyze_threshold')::float8
                  + current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0))
        ORDER BY s.relname
    LOOP
        BEGIN
            EXECUTE format('ANALYZE (SKIP_LOCKED) %s', stale);
            analyzed := analyzed || stale::text;
        EXCEPTION WHEN query_canceled OR OTHERS THEN
            RAISE WARNING 'gb_analyze_stale_graph: % left unanalyzed: %', stale, SQLERRM;
        END;
    END LOOP;
    RETURN analyzed;
END
$$;

REVOKE ALL ON FUNCTION gb_analyze_stale_graph() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_analyze_stale_graph() TO gligabao_app;

-- gb_live_edges_around(dataset, entities, per_entity): the ids of the newest `per_entity` live
-- edges at each end of each entity, of the dataset (remember's candidate facts, db/graph_writes).
-- Read by the walks of gb_edges_live_source and gb_edges_live_target above, and nothing else: under
-- row-level security the statement also carried `dataset_id = ANY (the user's datasets)`, which a
-- plan without statistics combined with the entity's timeline index in a bitmap, reading all the
-- dataset's live edges from the index of datasets for each entity and end (30,744 entries each, 49
-- entities, at 30,000 facts). With the owner's rights, in the transaction user's dataset only (as
-- gb_entities_could_be of migration 0015), bitmaps and sequential scans off.
CREATE FUNCTION gb_live_edges_around(dataset bigint, entities bigint[], per_entity integer)
RETURNS SETOF bigint
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = public, pg_temp
SET enable_bitmapscan = off SET enable_seqscan = off
AS $$
    SELECT n.id
    FROM unnest(entities) AS k(id)
    CROSS JOIN LATERAL (
        (SELECT g.id, g.dataset_id FROM gb_edges AS g
         WHERE g.source_id = k.id AND g.expired_at IS NULL
         ORDER BY g.created_at DESC, g.id DESC
         LIMIT per_entity)
        UNION ALL
        (SELECT g.id, g.dataset_id FROM gb_edges AS g
         WHERE g.target_id = k.id AND g.expired_at IS NULL
         ORDER BY g.created_at DESC, g.id DESC
         LIMIT per_entity)) AS n
    WHERE n.dataset_id = dataset
      AND EXISTS (SELECT 1 FROM gb_datasets AS d
                  WHERE d.id = dataset
                    AND d.user_id = NULLIF(current_setting('gligabao.user_id', true), ''))
$$;

REVOKE ALL ON FUNCTION gb_live_edges_around(bigint, bigint[], integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_live_edges_around(bigint, bigint[], integer) TO gligabao_app;

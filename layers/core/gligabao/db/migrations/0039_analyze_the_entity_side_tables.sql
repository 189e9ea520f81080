-- gb_analyze_stale_graph() (migration 0034) analyzes gb_entity_recency too (migration 0009): every
-- remember naming a known entity updates it, and the query's statements read it (the recent
-- entities' window of the keyword statement, the fallback seeds of the context statement). A
-- dataset just imported had none of its statistics until autovacuum came round: on the realistic
-- world of 100,000 facts (bench/realistic_world.py), whose recency table had never been analyzed,
-- the keyword statement planned for its values read all 110,065 entries of the recency index as a
-- bitmap (14.28 ms, against 3.87 ms for the generic plan its statement function keeps since
-- migration 0038; docs/performance.md). The context statement of a question with filters (sessions,
-- artifacts, types...) is not a function and is still planned for its values: its fallback seeds
-- read this table. Above all, a large remember is to analyze what it changed (migration 0034), and
-- it changes this table. Its analysis is cheap: 2.8-6.1 ms for the 1,008 entities of the realistic
-- world of 10,000 facts (`\timing` and `ANALYZE gb_entity_recency` in psql, as the cluster's
-- superuser, twice).
--
-- gb_entity_descriptions (0017) is left to autovacuum: its analysis computes the grams of its
-- index's expression for every sampled row (25-60 ms for the same 1,008 descriptions, ten times
-- its neighbour's, measured the same way), and the one statement that reads it, the keyword
-- statement, runs as a generic plan, which does not estimate its gram conditions from the
-- statistics.
CREATE OR REPLACE FUNCTION gb_analyze_stale_graph() RETURNS text[]
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
                            'gb_edge_artifacts', 'gb_entity_sessions', 'gb_edge_sessions',
                            'gb_entity_recency')
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

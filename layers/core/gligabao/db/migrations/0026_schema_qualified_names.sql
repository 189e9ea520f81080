-- The SQL functions that an index or the name guard runs name the functions they call with their
-- schema: public, the one the migrations create in (migration 0003 grants it). Building an index
-- and analyzing its table (autovacuum always; ANALYZE, VACUUM, REINDEX and CREATE INDEX by hand
-- since PostgreSQL 17) run the index's functions with only pg_catalog on the search path, where a
-- bare `gb_name_words` is not found: on PostgreSQL 16 autovacuum's ANALYZE of gb_entities failed
-- every minute, so the planner never had its statistics, and on 17 and 18 migration 0015 could
-- not build its index (a new database now gets 0015 as it is written here).
--
-- The names are qualified rather than the functions given `SET search_path`: a function with a
-- setting of its own is never inlined, and changes the setting at each call (once per candidate row
-- of the entity match for the guard). None of these is inlined today (a STRICT function whose body
-- is not strict throughout is not; gb_half, which is, binds its names when created), and they
-- return what they returned: the index on gb_name_keys needs no rebuild.
CREATE OR REPLACE FUNCTION gb_name_keys(dataset_id bigint, normalized_name text) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT ARRAY(
        SELECT DISTINCT dataset_id::text || ':' || key
        FROM public.gb_name_words(normalized_name) AS words,
             LATERAL (SELECT 'f' || words[1] AS key WHERE cardinality(words) > 0
                      UNION ALL
                      SELECT 'l' || words[cardinality(words)] WHERE cardinality(words) > 0
                      UNION ALL
                      SELECT 'p' || left(word, n)
                      FROM unnest(words) AS word, generate_series(1, least(length(word), 8)) AS n
                      UNION ALL
                      SELECT 'i' || string_agg(left(word, 1), '' ORDER BY position)
                      FROM unnest(words) WITH ORDINALITY AS w(word, position)
                      HAVING count(*) > 1
                      UNION ALL
                      SELECT 'n' WHERE cardinality(words) = 0
                      UNION ALL
                      SELECT 'd') AS keys
    )
$$;

CREATE OR REPLACE FUNCTION gb_could_be_one_entity(name_a text, name_b text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT public.gb_is_short_form(public.gb_name_words(name_a), public.gb_name_words(name_b))
        OR public.gb_is_short_form(public.gb_name_words(name_b), public.gb_name_words(name_a))
$$;

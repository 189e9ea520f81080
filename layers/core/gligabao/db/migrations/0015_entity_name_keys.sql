-- Entity resolution's vector match (graph_writes._MATCH_SQL) looks only at the stored entities
-- whose name could name the new one (migration 0011's guard), found by an index of their names.
--
-- Before, the match ordered the whole dataset by distance and then applied the guard and the
-- threshold. On a large table the planner reads that order from the HNSW index, which gives the
-- table's 40 nearest rows (`hnsw.ef_search`) and nothing beyond: a stored entity the guard accepts
-- was missed whenever 40 nearer rows, of this dataset or of others, did not pass, and the new
-- entity became a second one. With the guard's candidates first, the match is exact and reads a
-- few rows instead of an index walk per entity (bench/entity_match.py, README "Performance").
--
-- gb_name_keys(dataset, name): the keys of a name's first word (`f`) and last word (`l`), of each
-- word's first 1 to 8 characters (`p`), of its initials when it has several words (`i`), `n` for
-- a name of no word (only punctuation: the guard takes it for a short form of any name) and `d`
-- for every name, each prefixed with the dataset id like the gram keys of migration 0002: a key
-- finds names of its dataset only.
--
-- gb_name_words is named with its schema: building the index and analyzing its table (autovacuum
-- always, by hand since PostgreSQL 17) run gb_name_keys with only pg_catalog on the search path,
-- where the bare name is not found. Databases that ran this migration before it said so get the
-- same function from migration 0026.
CREATE FUNCTION gb_name_keys(dataset_id bigint, normalized_name text) RETURNS text[]
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

CREATE INDEX gb_entities_name_keys ON gb_entities USING gin (gb_name_keys(dataset_id, normalized_name));

-- The entities of `dataset` whose name could name the same entity as `new_name` (normalized): a
-- superset of those gb_could_be_one_entity accepts (the caller applies it), found by their keys.
--   * a stored name that is a short form of this one has each word beginning a word of this one:
--     its first and its last word are among this name's words' prefixes (or it is one word, their
--     initials), or it has no word;
--   * a stored name of which this one is a short form has a word beginning with each of this
--     name's words (the first 8 characters of each are keys), or, when this name is one word, its
--     initials are that word.
-- With the owner's rights, in the transaction user's dataset only, ids only (as the keyword
-- functions of migration 0003: under row-level security the GIN index would be unusable).
CREATE FUNCTION gb_entities_could_be(dataset bigint, new_name text) RETURNS bigint[]
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = public, pg_temp SET enable_seqscan = off
AS $$
DECLARE
    words text[] := gb_name_words(new_name);
    key text := dataset::text || ':';
    starts text[];  -- the prefixes of this name's words, and its initials
    first_words text[];
    last_words text[];
    any_of text[];
    all_of text[];
BEGIN
    starts := ARRAY(SELECT left(word, n) FROM unnest(words) AS word, generate_series(1, length(word)) AS n);
    IF cardinality(words) > 1 THEN
        starts := starts || (SELECT string_agg(left(word, 1), '' ORDER BY position)
                             FROM unnest(words) WITH ORDINALITY AS w(word, position));
    END IF;
    first_words := ARRAY(SELECT key || 'f' || start FROM unnest(starts) AS start);
    last_words := ARRAY(SELECT key || 'l' || start FROM unnest(starts) AS start);
    any_of := ARRAY[key || 'n'] || CASE WHEN cardinality(words) = 1 THEN ARRAY[key || 'i' || words[1]] ELSE '{}' END;
    -- a name of no word is a short form of every name of the dataset
    all_of := ARRAY(SELECT key || 'p' || left(word, 8) FROM unnest(words) AS word);
    IF cardinality(words) = 0 THEN
        all_of := ARRAY[key || 'd'];
    END IF;
    -- The keys hold the dataset: no other condition on the rows, so that the plan reads the keys'
    -- index and nothing else (not the dataset's rows, whose keys it would compute one by one;
    -- enable_seqscan off keeps a small or unanalyzed table from being read so too).
    RETURN ARRAY(
        SELECT e.id FROM gb_entities AS e
        WHERE ((gb_name_keys(e.dataset_id, e.normalized_name) && first_words
                AND gb_name_keys(e.dataset_id, e.normalized_name) && last_words)
               OR gb_name_keys(e.dataset_id, e.normalized_name) @> all_of
               OR gb_name_keys(e.dataset_id, e.normalized_name) && any_of)
          AND EXISTS (SELECT 1 FROM gb_datasets AS d
                      WHERE d.id = dataset
                        AND d.user_id = NULLIF(current_setting('gligabao.user_id', true), '')));
END
$$;

REVOKE ALL ON FUNCTION gb_entities_could_be(bigint, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION gb_entities_could_be(bigint, text) TO gligabao_app;

-- Keyword search of query: substring matching of the question's terms in entity names and
-- descriptions, narrowed by indexes before the exact scoring (no pg_trgm: the embedded
-- PostgreSQL does not ship it). Valid on PostgreSQL 16 and Aurora PostgreSQL 17.
--
-- gb_grams(dataset, text) is the set of 2- and 3-character substrings of the text, each
-- prefixed with the dataset id: a text containing a term contains every gram of the term,
-- so `gb_grams(...) @> grams of the term` finds a superset of the matches, within one
-- dataset only (a small dataset's posting lists never hold another dataset's rows).
-- The exact test (strpos) runs on those candidates only.

CREATE FUNCTION gb_grams(dataset_id bigint, content text) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT coalesce(array_agg(DISTINCT dataset_id::text || ':' || gram), '{}')
    FROM (
        SELECT substr(content, i, 3) AS gram FROM generate_series(1, length(content) - 2) AS i
        UNION ALL
        SELECT substr(content, i, 2) FROM generate_series(1, length(content) - 1) AS i
    ) AS grams
$$;

-- The keys of a term's grams in one dataset (the grams themselves come from the caller: the
-- trigrams of the term, or the term itself when it has 2 characters).
CREATE FUNCTION gb_keys(dataset_id bigint, grams text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT ARRAY(SELECT dataset_id::text || ':' || gram FROM unnest(grams) AS gram)
$$;

CREATE INDEX gb_entities_name_grams ON gb_entities USING gin (gb_grams(dataset_id, normalized_name));
CREATE INDEX gb_entities_description_grams ON gb_entities USING gin (gb_grams(dataset_id, lower(description)));

-- "+5 when the whole normalized name appears in the question": a name inside the question
-- starts with one of the question's substrings of up to 6 characters (the whole name when
-- it is shorter), so these prefixes find every candidate.
CREATE INDEX gb_entities_name_prefix ON gb_entities (dataset_id, left(normalized_name, 6));

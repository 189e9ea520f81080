-- A name that adds a word of rank to another names another thing: "senior treasurer" is not
-- "treasurer", nor "vice president" "president", though each word of the one begins a word of
-- the other (gb_is_short_form, migration 0011). The guard let a vector match make them one
-- entity, so that a promotion ("Kofi now holds the title senior treasurer") was resolved onto the
-- old title and stored as a restatement, the old fact never superseded: on the retrieval
-- benchmark's business world (bench/retrieval_business_world.py) 6 of its 117 changes were lost
-- so. A short form made of initials ("ibm", "ge" of "general electric") is read as before.
--
-- The words of rank are whole words of the longer name that the shorter one lacks; "co", "sub"
-- and "jr" are left out, being abbreviations of other things too ("acme co", "j.r. tolkien").
CREATE FUNCTION gb_adds_a_rank(short_form text[], name text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT EXISTS (
        SELECT 1 FROM unnest(name) AS word
        WHERE word = ANY (ARRAY['senior', 'junior', 'chief', 'head', 'lead', 'principal', 'deputy', 'vice',
                                'assistant', 'associate', 'acting', 'interim', 'former', 'ex'])
          AND word <> ALL (short_form)
    )
$$;

-- Whether `short_form` could stand for `name` (both as gb_name_words): each of its words begins a
-- word of the name and the name adds no word of rank, or it is one word made of the initials of
-- the name's words. gb_could_be_one_entity (migration 0026) asks it both ways.
CREATE OR REPLACE FUNCTION gb_is_short_form(short_form text[], name text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT (coalesce(bool_and(EXISTS (SELECT 1 FROM unnest(name) AS word WHERE starts_with(word, part))), true)
            AND NOT public.gb_adds_a_rank(short_form, name))
        OR (cardinality(short_form) = 1 AND cardinality(name) > 1
            AND short_form[1] = array_to_string(ARRAY(
                SELECT left(word, 1) FROM unnest(name) WITH ORDINALITY AS w(word, position) ORDER BY position
            ), ''))
    FROM unnest(short_form) AS part
$$;

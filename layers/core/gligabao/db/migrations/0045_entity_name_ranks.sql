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

-- Whether `short_form` is one word made of the initials of the name's words ("ibm").
CREATE FUNCTION gb_is_initials(short_form text[], name text[]) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT cardinality(short_form) = 1 AND cardinality(name) > 1
       AND short_form[1] = array_to_string(ARRAY(
           SELECT left(word, 1) FROM unnest(name) WITH ORDINALITY AS w(word, position) ORDER BY position
       ), '')
$$;

-- Whether two normalized names could name one entity: either is a short form of the other that
-- adds no word of rank, or its initials. The functions it calls are named with their schema, as
-- migration 0026 explains.
CREATE OR REPLACE FUNCTION gb_could_be_one_entity(name_a text, name_b text) RETURNS boolean
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$
    SELECT (public.gb_is_short_form(w.a, w.b) AND NOT public.gb_adds_a_rank(w.a, w.b))
        OR (public.gb_is_short_form(w.b, w.a) AND NOT public.gb_adds_a_rank(w.b, w.a))
        OR public.gb_is_initials(w.a, w.b) OR public.gb_is_initials(w.b, w.a)
    FROM (SELECT public.gb_name_words(name_a) AS a, public.gb_name_words(name_b) AS b) AS w
$$;
